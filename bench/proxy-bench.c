/* proxy-bench.c: what one session's proxy costs (docs/decisions.md, "The
 * proxy: one squid per session"): N squids started at once through
 * proxy_start, the time from the call to proxy_wait_ready's return for
 * each, and the memory of each one's processes (bwrap, the init of its pid
 * namespace, squid): VmRSS, and Pss, which shares the libraries among the N.
 *
 *   proxy-bench [N [ROUNDS]]      (defaults 1 and 5; as root it runs in a
 *                                  network namespace of its own, lo only)
 *
 * Prints one line per round and the medians.  Nothing is asserted. */
#include "process.h"
#include "proxy.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_N 64

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The kB value of "Key:" in /proc/PID/<file>, or 0. */
static long
proc_kb(pid_t pid, const char *file, const char *key)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	long v = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, key, kl) == 0) {
			v = strtol(line + kl, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The processes of one proxy: bwrap, its init, the init's children. */
static size_t
proxy_pids(const struct proxy *p, pid_t *out, size_t max)
{
	char path[64], buf[512];
	size_t n = 0;
	FILE *f;

	if (p->pid > 0 && n < max)
		out[n++] = p->pid;
	if (p->init <= 0)
		return n;
	if (n < max)
		out[n++] = p->init;
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)p->init, (int)p->init);
	if ((f = fopen(path, "re")) == NULL)
		return n;
	if (fgets(buf, sizeof buf, f) != NULL)
		for (char *s = buf, *e; n < max; s = e) {
			long v = strtol(s, &e, 10);

			if (e == s)
				break;
			out[n++] = (pid_t)v;
		}
	fclose(f);
	return n;
}

/* CPU time of pid so far, in ms (utime + stime of /proc/PID/stat). */
static double
cpu_ms(pid_t pid)
{
	char path[64], buf[1024], *s;
	unsigned long ut = 0, st = 0;
	FILE *f;
	size_t len;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	len = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* After the ")" that ends the command: fields 3 on; utime is 14. */
	if ((s = strrchr(buf, ')')) == NULL ||
	    sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, dcmp);
	return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
lo_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		exit(1);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
		exit(1);
	close(fd);
}

int
main(int argc, char **argv)
{
	long n = 1, rounds = 5;
	static double ready_ms[MAX_N * 100], rss_mb[100], pss_mb[100], squid_mb[100],
		slowest[100], hwm_mb[100], cpu[100];
	size_t nready = 0;
	char *bwrap = find_in_path("bwrap", NULL);
	char *squid = find_in_path("squid", "/usr/sbin:/usr/bin:/sbin:/bin");

	if ((argc > 1 && parse_long(argv[1], &n) != 0) ||
	    (argc > 2 && parse_long(argv[2], &rounds) != 0) || n < 1 || n > MAX_N || rounds < 1 ||
	    rounds > 100 || bwrap == NULL || squid == NULL) {
		fprintf(stderr, "usage: proxy-bench [N (1-%d) [ROUNDS (1-100)]]; needs bwrap and "
				"squid\n", MAX_N);
		return 2;
	}
	if (geteuid() == 0) {
		if (unshare(CLONE_NEWNET) != 0) {
			perror("unshare");
			return 1;
		}
		lo_up();
	}
	printf("%ld squid(s) at once, %ld rounds (%s, %s)\n", n, rounds, bwrap, squid);
	for (long r = 0; r < rounds; r++) {
		struct proxy p[MAX_N];
		double t0[MAX_N], worst = 0, rss = 0, pss = 0, sq = 0, hwm = 0, c = 0;
		char *base = xasprintf("/tmp/hqt-proxy-bench-%d-%ld", (int)getpid(), r);

		for (int i = 0; i < n; i++) {
			char *dir = xasprintf("%s/%d", base, i), *err = NULL;
			char *allow[] = { "api.anthropic.com:443", "platform.claude.com:443",
					  "claude.ai:443", NULL };

			p[i] = (struct proxy)PROXY_INIT;
			t0[i] = now_s();
			if (proxy_start(&p[i], bwrap, squid, dir, allow, &err) != 0) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			free(dir);
		}
		for (int i = 0; i < n; i++) {
			char *err = NULL;

			if (proxy_wait_ready(&p[i], 10000, &err) != 0) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			ready_ms[nready] = (now_s() - t0[i]) * 1000;
			if (ready_ms[nready] > worst)
				worst = ready_ms[nready];
			nready++;
		}
		/* Settled: the memory a session's proxy keeps while idle. */
		usleep(300 * 1000);
		for (int i = 0; i < n; i++) {
			pid_t pids[8];
			size_t np = proxy_pids(&p[i], pids, 8);

			for (size_t k = 0; k < np; k++) {
				long kb = proc_kb(pids[k], "status", "VmRSS:");

				rss += kb / 1024.0;
				pss += proc_kb(pids[k], "smaps_rollup", "Pss:") / 1024.0;
				if (k != 2)
					continue;
				sq += kb / 1024.0;
				hwm += proc_kb(pids[k], "status", "VmHWM:") / 1024.0;
				c += cpu_ms(pids[k]);
			}
		}
		rss_mb[r] = rss / n;
		pss_mb[r] = pss / n;
		squid_mb[r] = sq / n;
		hwm_mb[r] = hwm / n;
		cpu[r] = c / n;
		slowest[r] = worst;
		printf("round %ld: slowest ready %.0f ms; per proxy: squid CPU %.0f ms, VmRSS %.1f "
		       "MiB (peak %.1f), all its processes VmRSS %.1f MiB, Pss %.1f MiB\n",
		       r + 1, worst, cpu[r], squid_mb[r], hwm_mb[r], rss_mb[r], pss_mb[r]);
		for (int i = 0; i < n; i++)
			proxy_stop(&p[i]);
		rmdir(base);
		free(base);
	}
	printf("median over %ld rounds: ready %.0f ms (each proxy; slowest of a round %.0f ms), "
	       "squid CPU %.0f ms, squid VmRSS %.1f MiB (peak %.1f), all processes VmRSS %.1f "
	       "MiB, Pss %.1f MiB per proxy\n",
	       rounds, median(ready_ms, nready), median(slowest, (size_t)rounds),
	       median(cpu, (size_t)rounds), median(squid_mb, (size_t)rounds),
	       median(hwm_mb, (size_t)rounds), median(rss_mb, (size_t)rounds),
	       median(pss_mb, (size_t)rounds));
	free(bwrap);
	free(squid);
	return 0;
}
