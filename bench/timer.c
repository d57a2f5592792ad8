/* timer.c: bench-timer, the clock of hqt's benchmarks (bench/README.md,
 * "Method").  It times whole processes from outside, with nothing in the
 * timed interval but the process itself: no shell, no fork of a timer, no
 * command substitution.
 *
 *   bench-timer [-n RUNS] [-w WARMUP] [-g GOAL] [-s PID] [-a LABEL] [-b LABEL]
 *               [-k NAME] [-r FILE] [-i FILE] -- SIDE [--vs SIDE]
 *   SIDE:       COMMAND [ARG...] [--then COMMAND [ARG...]]...
 *
 * Each run: the monotonic clock read, posix_spawn (glibc clones with
 * CLONE_VM|CLONE_VFORK, so the parent copies nothing and resumes once the
 * child has exec'd), wait4, the clock read again.  wait4's rusage is the
 * child's CPU plus that of the children it reaped (hqt's tmux client); -s
 * PID adds a process that is no child (the tmux server) through the
 * nanoseconds in /proc/PID/schedstat, read just outside the interval.
 * Standard input (with -i FILE: that file, opened anew for each run) and
 * output are /dev/null, standard error is kept; a command that fails stops
 * the benchmark (its time would measure nothing).
 *
 * A side of several commands (--then) runs them one after the other, each
 * spawned and reaped as above, all inside the one interval: what a person
 * would type one after the other, with no shell between them.  "{}" in an
 * argument is the run's number (0, 1, ...; the warm-up counts), put in
 * before the clock starts, for commands that need a new name each run.
 *
 * With --vs, A and B run in pairs, alternately first, WARMUP pairs
 * untimed, then RUNS pairs; the figure quoted is the median of the RUNS
 * per-pair ratios A/B, with a distribution-free 95% interval of that
 * median (order statistics of the binomial), so drift in the machine's
 * speed hits both sides of a pair alike and the noise left is shown.  An
 * interval wider than +-5% of the median cannot tell a 10% change from
 * noise, and says so.
 *
 * The last line is for scripts (tab-separated):
 *   result NAME MEDIAN_A_MS MEDIAN_B_MS RATIO CI_LO CI_HI RESOLVES_10%
 *          CPU_A_MS CPU_B_MS SERVER_A_MS SERVER_B_MS
 * (B's and the ratio's fields are "-" without --vs). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_RUNS 100000

#define MAX_CMDS 8

struct side {
	char **argv[MAX_CMDS];       /* its commands, run one after the other */
	int ncmd;
	const char *label;
	char *path[MAX_CMDS];        /* argv[0] found on PATH once, outside the clock */
	double *wall, *cpu, *server; /* per run, ms */
};

/* What a side holds, freed (LeakSanitizer counts what exit leaves). */
static void
drop(struct side *s)
{
	for (int c = 0; c < s->ncmd; c++)
		free(s->path[c]);
	free(s->wall);
	free(s->cpu);
	free(s->server);
}

static void
die(const char *fmt, const char *arg)
{
	fprintf(stderr, "bench-timer: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p == NULL) {
		perror("bench-timer");
		abort();
	}
	return p;
}

/* argv[0] as execvp would find it: the PATH search is paid here, once,
 * not in every timed run of either side. */
static char *
find_program(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char buf[4096];

	if (strchr(name, '/') != NULL)
		return strdup(name);
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = end + 1) {
		struct stat st;
		int len;

		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		/* An empty element is the current directory, as for execvp. */
		if (end == p)
			len = snprintf(buf, sizeof buf, "./%s", name);
		else
			len = snprintf(buf, sizeof buf, "%.*s/%s", (int)(end - p), p, name);
		if (len > 0 && (size_t)len < sizeof buf && access(buf, X_OK) == 0 &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return strdup(buf);
		if (*end == '\0')
			break;
	}
	die("'%s' not found on PATH", name);
	return NULL;
}

static double
ms_of(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static double
tv_ms(const struct timeval *tv)
{
	return (double)tv->tv_sec * 1e3 + (double)tv->tv_usec / 1e3;
}

/* Nanoseconds PID has run, or -1 (no such process). */
static long long
schedstat_ns(pid_t pid)
{
	char path[64], buf[128];
	ssize_t n;
	int fd;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

static posix_spawn_file_actions_t actions;

/* ARGV with every "{}" replaced by RUN, in new memory (free_argv). */
static char **
with_run(char **argv, int run)
{
	char num[16], **out;
	int n = 0;

	while (argv[n] != NULL)
		n++;
	out = xcalloc((size_t)n + 1, sizeof *out);
	snprintf(num, sizeof num, "%d", run);
	for (int i = 0; i < n; i++) {
		const char *p = argv[i], *m;
		size_t len = strlen(p) + 1, k = 0;

		for (m = p; (m = strstr(m, "{}")) != NULL; m += 2)
			len += strlen(num);
		out[i] = xcalloc(len, 1);
		while ((m = strstr(p, "{}")) != NULL) {
			memcpy(out[i] + k, p, (size_t)(m - p));
			k += (size_t)(m - p);
			memcpy(out[i] + k, num, strlen(num));
			k += strlen(num);
			p = m + 2;
		}
		memcpy(out[i] + k, p, strlen(p) + 1);
	}
	return out;
}

static void
free_argv(char **argv)
{
	for (char **a = argv; *a != NULL; a++)
		free(*a);
	free(argv);
}

/* One whole run of SIDE (number RUN): its wall time, CPU and the
 * server's CPU. */
static void
run_once(struct side *s, pid_t server, int run, int slot)
{
	char **argv[MAX_CMDS];
	struct timespec t0, t1;
	double cpu = 0;
	long long s0, s1;
	int c;

	for (c = 0; c < s->ncmd; c++)
		argv[c] = with_run(s->argv[c], run);
	s0 = schedstat_ns(server);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (c = 0; c < s->ncmd; c++) {
		struct rusage ru;
		pid_t pid;
		int rc, status;

		rc = posix_spawn(&pid, s->path[c], &actions, NULL, argv[c], environ);
		if (rc != 0) {
			errno = rc;
			perror(s->path[c]);
			exit(1);
		}
		while (wait4(pid, &status, 0, &ru) < 0)
			if (errno != EINTR) {
				perror("bench-timer: wait4");
				exit(1);
			}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr,
				"bench-timer: '%s' failed (%s %d in '%s'): its time would measure "
				"nothing\n",
				s->label, WIFEXITED(status) ? "exit" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
				argv[c][0]);
			exit(1);
		}
		cpu += tv_ms(&ru.ru_utime) + tv_ms(&ru.ru_stime);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s1 = schedstat_ns(server);
	for (c = 0; c < s->ncmd; c++)
		free_argv(argv[c]);
	if (slot < 0)
		return;
	s->wall[slot] = ms_of(&t0, &t1);
	s->cpu[slot] = cpu;
	s->server[slot] = s0 >= 0 && s1 >= 0 ? (double)(s1 - s0) / 1e6 : -1;
}

/* Split the side starting at ARGV (NULL-ended) at each "--then", its
 * programs found on PATH. */
static void
set_side(struct side *s, char **argv)
{
	s->ncmd = 0;
	s->argv[s->ncmd++] = argv;
	for (char **a = argv; *a != NULL; a++)
		if (strcmp(*a, "--then") == 0) {
			if (s->ncmd == MAX_CMDS)
				die("more than %s commands on a side", "8");
			*a = NULL;
			s->argv[s->ncmd++] = a + 1;
		}
	for (int c = 0; c < s->ncmd; c++) {
		if (s->argv[c][0] == NULL)
			die("%s", "an empty command on a side");
		s->path[c] = find_program(s->argv[c][0]);
	}
	if (s->label == NULL)
		s->label = argv[0];
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double *
sorted_copy(const double *v, int n)
{
	double *c = xcalloc((size_t)n, sizeof *c);

	memcpy(c, v, (size_t)n * sizeof *c);
	qsort(c, (size_t)n, sizeof *c, cmp_double);
	return c;
}

static double
median(const double *v, int n)
{
	double *c = sorted_copy(v, n), m;

	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

/* The 1-based rank k of the order statistics x(k) and x(n+1-k) that hold
 * the median with at least 95% confidence, whatever the distribution: the
 * largest k with P(Bin(n, 1/2) <= k-1) <= 0.025.  0: too few runs. */
static int
ci_rank(int n)
{
	double cdf = 0;
	int k;

	for (k = 0; k < n; k++) {
		/* P(X = k), through logs: no overflow at large n. */
		double p = exp(lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) -
			       n * log(2.0));

		if (cdf + p > 0.025)
			return k; /* P(X <= k-1) = cdf <= 0.025 */
		cdf += p;
	}
	return 0;
}

static void
usage(FILE *f)
{
	fputs("usage: bench-timer [-n RUNS] [-w WARMUP] [-g GOAL] [-s SERVER_PID] [-a LABEL]\n"
	      "                   [-b LABEL] [-k NAME] [-r FILE] [-i INPUT] -- SIDE [--vs SIDE]\n"
	      "  SIDE: COMMAND [ARG...] [--then COMMAND [ARG...]]...  ({} in an ARG: the run's number)\n",
	      f);
}

static void
print_side(const struct side *s, int n, int have_server)
{
	double *w = sorted_copy(s->wall, n);

	printf("  %-36s median %8.2f ms  cpu %6.2f ms", s->label, median(s->wall, n),
	       median(s->cpu, n));
	if (have_server)
		printf("  server %6.2f ms", median(s->server, n));
	printf("  (%d runs, %.2f-%.2f)\n", n, w[0], w[n - 1]);
	free(w);
}

int
main(int argc, char **argv)
{
	struct side a = { .label = NULL }, b = { .label = NULL };
	const char *name = "pair", *raw = NULL, *input = "/dev/null";
	double goal = 0;
	int runs = 30, warmup = 3, opt, i, have_b = 0, have_server;
	pid_t server = 0;
	char *end;

	while ((opt = getopt(argc, argv, "+n:w:g:s:a:b:k:r:i:h")) != -1) {
		switch (opt) {
		case 'n':
		case 'w': {
			long v = strtol(optarg, &end, 10);

			if (*optarg == '\0' || *end != '\0' || v < (opt == 'n') || v > MAX_RUNS)
				die("bad number '%s'", optarg);
			*(opt == 'n' ? &runs : &warmup) = (int)v;
			break;
		}
		case 'g':
			if (strcmp(optarg, "-") == 0) { /* no goal: the ratio for scale */
				goal = 0;
				break;
			}
			goal = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || !(goal > 0))
				die("bad goal '%s'", optarg);
			break;
		case 's': {
			long v = strtol(optarg, &end, 10);

			if (*optarg == '\0' || *end != '\0' || v <= 0)
				die("bad pid '%s'", optarg);
			server = (pid_t)v;
			break;
		}
		case 'a': a.label = optarg; break;
		case 'b': b.label = optarg; break;
		case 'k': name = optarg; break;
		case 'r': raw = optarg; break;
		case 'i': input = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	a.argv[0] = argv + optind;
	for (i = optind; i < argc; i++)
		if (strcmp(argv[i], "--vs") == 0) {
			argv[i] = NULL;
			b.argv[0] = argv + i + 1;
			have_b = 1;
			break;
		}
	if (a.argv[0][0] == NULL || (have_b && b.argv[0][0] == NULL)) {
		usage(stderr);
		return 2;
	}
	set_side(&a, a.argv[0]);
	if (have_b)
		set_side(&b, b.argv[0]);
	have_server = server > 0 && schedstat_ns(server) >= 0;
	if (server > 0 && !have_server)
		fprintf(stderr, "bench-timer: no /proc/%d/schedstat: server CPU not counted\n",
			(int)server);

	posix_spawn_file_actions_init(&actions);
	if (access(input, R_OK) != 0)
		die("cannot read '%s'", input);
	posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
	a.wall = xcalloc((size_t)runs, sizeof(double));
	a.cpu = xcalloc((size_t)runs, sizeof(double));
	a.server = xcalloc((size_t)runs, sizeof(double));
	b.wall = xcalloc((size_t)runs, sizeof(double));
	b.cpu = xcalloc((size_t)runs, sizeof(double));
	b.server = xcalloc((size_t)runs, sizeof(double));

	/* Alternate which side goes first, in the warm-up too. */
	for (i = 0; i < warmup + runs; i++) {
		int slot = i < warmup ? -1 : i - warmup;

		if (!have_b) {
			run_once(&a, server, i, slot);
		} else if (i % 2 == 0) {
			run_once(&a, server, i, slot);
			run_once(&b, server, i, slot);
		} else {
			run_once(&b, server, i, slot);
			run_once(&a, server, i, slot);
		}
	}

	if (raw != NULL) {
		FILE *f = fopen(raw, "we");

		if (f == NULL)
			die("cannot write '%s'", raw);
		fprintf(f, "run\twall_a\tcpu_a\tserver_a\twall_b\tcpu_b\tserver_b\n");
		for (i = 0; i < runs; i++)
			fprintf(f, "%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", i, a.wall[i],
				a.cpu[i], a.server[i], have_b ? b.wall[i] : 0,
				have_b ? b.cpu[i] : 0, have_b ? b.server[i] : 0);
		fclose(f);
	}

	print_side(&a, runs, have_server);
	if (!have_b) {
		printf("result\t%s\t%.3f\t-\t-\t-\t-\t-\t%.3f\t-\t%.3f\t-\n", name,
		       median(a.wall, runs), median(a.cpu, runs),
		       have_server ? median(a.server, runs) : -1.0);
		drop(&a);
		drop(&b);
		posix_spawn_file_actions_destroy(&actions);
		return 0;
	}
	print_side(&b, runs, have_server);

	double *ratio = xcalloc((size_t)runs, sizeof *ratio), *cpur;
	double r, lo = 0, hi = 0, half = 0;
	int k = ci_rank(runs), resolves;

	cpur = xcalloc((size_t)runs, sizeof *cpur);
	for (i = 0; i < runs; i++) {
		ratio[i] = a.wall[i] / b.wall[i];
		cpur[i] = b.cpu[i] > 0 ? a.cpu[i] / b.cpu[i] : 0;
	}
	r = median(ratio, runs);
	if (k > 0) {
		double *s = sorted_copy(ratio, runs);

		lo = s[k - 1];
		hi = s[runs - k];
		half = fmax(r - lo, hi - r) / r;
		free(s);
	}
	resolves = k > 0 && half <= 0.05;
	printf("  ratio %.2fx (median of %d pair ratios", r, runs);
	if (k > 0)
		printf("; 95%% interval %.2f-%.2fx, +-%.1f%%", lo, hi, 100 * half);
	printf("); cpu %.2fx\n", median(cpur, runs));
	if (!resolves)
		printf("  noise: %s, this run cannot tell a 10%% change from noise\n",
		       k > 0 ? "the interval is wider than +-5%" : "too few runs for an interval");
	if (goal > 0) {
		const char *verdict = r <= goal ? "ok" : "OVER GOAL";

		printf("  goal <= %gx: %s", goal, verdict);
		if (k > 0 && lo <= goal && goal <= hi)
			printf(" (the goal is inside the interval: a close call)");
		printf("\n");
	}
	printf("result\t%s\t%.3f\t%.3f\t%.4f\t%.4f\t%.4f\t%d\t%.3f\t%.3f\t%.3f\t%.3f\n", name,
	       median(a.wall, runs), median(b.wall, runs), r, lo, hi, resolves, median(a.cpu, runs),
	       median(b.cpu, runs), have_server ? median(a.server, runs) : -1.0,
	       have_server ? median(b.server, runs) : -1.0);
	free(ratio);
	free(cpur);
	drop(&a);
	drop(&b);
	posix_spawn_file_actions_destroy(&actions);
	return 0;
}
