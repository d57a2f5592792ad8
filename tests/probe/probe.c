/* probe.c: the attacks and controls the sandbox tests run inside a real
 * sandbox.  Each command prints one line "<command> <args>: <result>", where
 * the result is "ok" (maybe followed by data) or the errno name. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/tty.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

extern char **environ;

static const char *cmdline; /* the current command and its arguments, for the output */
static int tee_fd = -1;      /* `tee PATH`: every later line is also appended there */

static void
result(const char *fmt, ...)
{
	char line[8192];
	va_list ap;
	int n = snprintf(line, sizeof line, "%s: ", cmdline);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof line)
		vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	printf("%s\n", line);
	fflush(stdout);
	if (tee_fd >= 0)
		dprintf(tee_fd, "%s\n", line); /* one write per line: a reader sees whole lines */
}

static void
ok_or_errno(long r)
{
	if (r < 0)
		result("%s", strerrorname_np(errno));
	else
		result("ok");
}

static int
parse_int(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 0);
	return errno == 0 && end != s && *end == '\0' ? 0 : -1;
}

static void
cmd_read(const char *path)
{
	char buf[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		ok_or_errno(-1);
		return;
	}
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0) {
		ok_or_errno(-1);
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	result("ok %s", buf);
}

static void
cmd_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t n = strlen(text);

	if (fd < 0 || write(fd, text, n) != (ssize_t)n) {
		ok_or_errno(-1);
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	result("ok");
}

static void
cmd_ls(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char out[2048] = "";

	if (d == NULL) {
		ok_or_errno(-1);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		strncat(out, " ", sizeof out - strlen(out) - 1);
		strncat(out, de->d_name, sizeof out - strlen(out) - 1);
	}
	closedir(d);
	result("ok%s", out);
}

static void
cmd_status(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256], out[1024] = "";

	if (f == NULL) {
		ok_or_errno(-1);
		return;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "CapEff:", 7) == 0 || strncmp(line, "NoNewPrivs:", 11) == 0 ||
		    strncmp(line, "Seccomp:", 8) == 0 || strncmp(line, "CapBnd:", 7) == 0) {
			char *c = strchr(line, ':');
			char *v = c + 1;
			*c = '\0';
			while (*v == ' ' || *v == '\t')
				v++;
			v[strcspn(v, "\n")] = '\0';
			snprintf(out + strlen(out), sizeof out - strlen(out), " %s=%s", line, v);
		}
	}
	fclose(f);
	result("ok%s", out);
}

static void
cmd_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char out[1024] = "";
	int self = d != NULL ? dirfd(d) : -1;

	if (d == NULL) {
		ok_or_errno(-1);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		long fd;
		/* its own: the listing, and the `tee` file (opened after any leak,
		 * so it never hides one) */
		if (parse_int(de->d_name, &fd) < 0 || fd == self || fd == tee_fd)
			continue;
		snprintf(out + strlen(out), sizeof out - strlen(out), " %ld", fd);
	}
	closedir(d);
	result("ok%s", out);
}

static void
cmd_pids(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (d == NULL) {
		ok_or_errno(-1);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		long pid;
		n += parse_int(de->d_name, &pid) == 0;
	}
	closedir(d);
	result("ok %d", n);
}

static void
cmd_env(void)
{
	char out[8192] = "";

	for (char **e = environ; *e != NULL; e++) {
		size_t n = strcspn(*e, "=");
		snprintf(out + strlen(out), sizeof out - strlen(out), " %.*s", (int)n, *e);
	}
	result("ok%s", out);
}

static void
cmd_getenv(const char *name)
{
	const char *v = getenv(name);

	if (v == NULL)
		result("unset");
	else
		result("ok %s", v);
}

static void
cmd_socket(const char *fam)
{
	static const struct { const char *name; long fam; long proto; } fams[] = {
		{ "unix", AF_UNIX, 0 }, { "inet", AF_INET, 0 }, { "inet6", AF_INET6, 0 },
		{ "netlink", AF_NETLINK, 0 }, { "packet", AF_PACKET, 0 },
		{ "bluetooth", 31, 0 }, { "alg", 38, 0 }, { "vsock", 40, 0 }, { "key", 15, 0 },
		{ "x25", 9, 0 },
		/* 0x100000002: AF_INET to a kernel that reads an int, but not to a
		 * filter comparing 64 bits naively. */
		{ "inet-high", 0x100000002L, 0 },
		/* Netlink's protocols, raw like ss and udevadm open them: the
		 * host's socket table, its device events, and the same table
		 * asked for with a bit the kernel drops. */
		{ "netlink-route", AF_NETLINK, NETLINK_ROUTE },
		{ "netlink-sock-diag", AF_NETLINK, NETLINK_SOCK_DIAG },
		{ "netlink-uevent", AF_NETLINK, NETLINK_KOBJECT_UEVENT },
		{ "netlink-sock-diag-high", AF_NETLINK, 0x100000000L | NETLINK_SOCK_DIAG },
	};
	int type = SOCK_DGRAM;

	for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
		if (strcmp(fams[i].name, fam) != 0)
			continue;
		if (fams[i].fam == AF_PACKET || strncmp(fam, "netlink-", 8) == 0)
			type = SOCK_RAW;
		if (fams[i].fam == 38 || fams[i].fam == 40 || fams[i].fam == 31)
			type = SOCK_SEQPACKET;
		long fd = syscall(SYS_socket, fams[i].fam, type, fams[i].proto);
		if (fd < 0 && (fams[i].fam == 38 || fams[i].fam == 40 || fams[i].fam == 31)) {
			int e = errno;
			fd = syscall(SYS_socket, fams[i].fam, SOCK_STREAM, 0);
			if (fd < 0)
				errno = e;
		}
		ok_or_errno(fd);
		if (fd >= 0)
			close((int)fd);
		return;
	}
	result("EINVAL unknown family");
}

/* getifaddrs (NETLINK_ROUTE), as node's os.networkInterfaces() calls it:
 * "ok" and whether the loopback interface was among them. */
static void
cmd_ifaddrs(void)
{
	struct ifaddrs *ifa;
	int lo = 0;

	if (getifaddrs(&ifa) < 0) {
		ok_or_errno(-1);
		return;
	}
	for (struct ifaddrs *i = ifa; i != NULL; i = i->ifa_next)
		if (strcmp(i->ifa_name, "lo") == 0)
			lo = 1;
	freeifaddrs(ifa);
	result(lo ? "ok lo" : "ok no lo");
}

static void
cmd_connect_tcp(const char *host, const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	long p;
	int fd;

	if (parse_int(port, &p) < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		result("EINVAL");
		return;
	}
	sa.sin_port = htons((unsigned short)p);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ok_or_errno(-1);
		return;
	}
	ok_or_errno(connect(fd, (struct sockaddr *)&sa, sizeof sa));
	close(fd);
}

static void
cmd_connect_unix(const char *name, int abstract)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	socklen_t len;
	int fd;

	if (n + 2 > sizeof sa.sun_path) {
		result("ENAMETOOLONG");
		return;
	}
	memcpy(sa.sun_path + (abstract ? 1 : 0), name, n);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ok_or_errno(-1);
		return;
	}
	ok_or_errno(connect(fd, (struct sockaddr *)&sa, len));
	close(fd);
}

static void
cmd_clone_ns(unsigned long flag)
{
	long pid = syscall(SYS_clone, flag | SIGCHLD, 0, 0, 0, 0);

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	ok_or_errno(pid);
}

static void
cmd_syscall(const char *name)
{
	long r;

	if (strcmp(name, "getpid") == 0)
		r = syscall(SYS_getpid);
	else if (strcmp(name, "add_key") == 0)
		r = syscall(SYS_add_key, "user", "hqt-probe", "x", 1, KEY_SPEC_PROCESS_KEYRING);
	else if (strcmp(name, "keyctl") == 0)
		r = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
	else if (strcmp(name, "request_key") == 0)
		r = syscall(SYS_request_key, "user", "hqt-probe", NULL, 0);
	else if (strcmp(name, "io_uring_setup") == 0) {
		char params[120] = { 0 };
		r = syscall(SYS_io_uring_setup, 1, params);
		if (r >= 0)
			close((int)r);
	} else if (strcmp(name, "mount") == 0)
		r = mount("none", "/tmp", "tmpfs", 0, NULL);
	else if (strcmp(name, "umount") == 0)
		r = umount2("/tmp", MNT_DETACH);
	else if (strcmp(name, "pivot_root") == 0)
		r = syscall(SYS_pivot_root, "/tmp", "/tmp");
	else if (strcmp(name, "fsopen") == 0)
		r = syscall(SYS_fsopen, "tmpfs", 0);
	else if (strcmp(name, "open_tree") == 0)
		r = syscall(SYS_open_tree, AT_FDCWD, "/tmp", 1 /* OPEN_TREE_CLONE */);
	else if (strcmp(name, "unshare-user") == 0)
		r = unshare(CLONE_NEWUSER);
	else if (strcmp(name, "unshare-mount") == 0)
		r = unshare(CLONE_NEWNS);
	else if (strcmp(name, "setns") == 0) {
		int fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
		r = fd < 0 ? -1 : setns(fd, 0);
		if (fd >= 0)
			close(fd);
	} else if (strcmp(name, "clone-newuser") == 0) {
		cmd_clone_ns(CLONE_NEWUSER);
		return;
	} else if (strcmp(name, "clone-plain") == 0) {
		cmd_clone_ns(0);
		return;
	} else if (strcmp(name, "clone3") == 0) {
		unsigned long args[11] = { 0 };
		args[4] = SIGCHLD; /* exit_signal */
		r = syscall(SYS_clone3, args, 88);
		if (r == 0)
			_exit(0);
		if (r > 0)
			waitpid((pid_t)r, NULL, 0);
	} else if (strcmp(name, "bpf") == 0)
		r = syscall(SYS_bpf, 0, NULL, 0);
	else if (strcmp(name, "perf_event_open") == 0) {
		char attr[128] = { 0 };
		r = syscall(SYS_perf_event_open, attr, 0, -1, -1, 0);
	} else if (strcmp(name, "userfaultfd") == 0)
		r = syscall(SYS_userfaultfd, 0);
	else if (strcmp(name, "x32-getpid") == 0)
		r = syscall(0x40000000 | SYS_getpid); /* killed: only the native ABI passes */
	else {
		result("EINVAL unknown syscall");
		return;
	}
	ok_or_errno(r);
}

static void
cmd_tiocsti(const char *fdstr, int high)
{
	long fd;
	char c = 'Q';
	unsigned long req = TIOCSTI;

	if (parse_int(fdstr, &fd) < 0) {
		result("EINVAL");
		return;
	}
	if (high)
		req |= 1UL << 32; /* the kernel reads an unsigned int and drops these */
	ok_or_errno(syscall(SYS_ioctl, (int)fd, req, &c));
}

static void
cmd_tioclinux(const char *fdstr)
{
	long fd;
	char sub = 6; /* TIOCL_GETSHIFTSTATE: harmless, and ENOTTY/EINVAL off a VT */

	if (parse_int(fdstr, &fd) < 0) {
		result("EINVAL");
		return;
	}
	ok_or_errno(syscall(SYS_ioctl, (int)fd, (unsigned long)TIOCLINUX, &sub));
}

/* TIOCSETD to N_TTY: the attack would ask for another line discipline
 * (and load its module); asking for the one the terminal has changes
 * nothing, so the control may run on a pty the test made. */
static void
cmd_tiocsetd(const char *fdstr)
{
	long fd;
	int disc = N_TTY;

	if (parse_int(fdstr, &fd) < 0) {
		result("EINVAL");
		return;
	}
	ok_or_errno(syscall(SYS_ioctl, (int)fd, (unsigned long)TIOCSETD, &disc));
}

/* TIOCCONS: console output to this terminal. */
static void
cmd_tioccons(const char *fdstr)
{
	long fd;

	if (parse_int(fdstr, &fd) < 0) {
		result("EINVAL");
		return;
	}
	ok_or_errno(syscall(SYS_ioctl, (int)fd, (unsigned long)TIOCCONS));
}

/* The result of fn(fd) in a child of a session of its own, where a terminal
 * can become the controlling one: the child exits with the errno. */
static void
in_new_session(int fd, int (*fn)(int))
{
	int st;
	pid_t pid = fork();

	if (pid < 0) {
		ok_or_errno(-1);
		return;
	}
	if (pid == 0) {
		if (setsid() < 0)
			_exit(errno);
		_exit(fn(fd) < 0 ? errno : 0);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st))
		result("EINVAL child ended by a signal");
	else if (WEXITSTATUS(st) != 0)
		result("%s", strerrorname_np(WEXITSTATUS(st)));
	else
		result("ok");
}

static int
steal_tty(int fd)
{
	return ioctl(fd, TIOCSCTTY, 1);
}

static int
take_tty(int fd)
{
	return ioctl(fd, TIOCSCTTY, 0);
}

/* TIOCSCTTY with 1: take fd's terminal from the session that holds it. */
static void
cmd_tiocsctty_steal(const char *fdstr)
{
	long fd;

	if (parse_int(fdstr, &fd) < 0) {
		result("EINVAL");
		return;
	}
	in_new_session((int)fd, steal_tty);
}

/* A pty of the process's own becomes its controlling terminal, as a harness
 * runs a shell in one. */
static void
cmd_pty_ctty(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), s = -1;

	if (m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0)
		s = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0)
		ok_or_errno(-1);
	else
		in_new_session(s, take_tty);
	if (s >= 0)
		close(s);
	if (m >= 0)
		close(m);
}

/* What a full-screen program and a shell do with their terminal: termios
 * read and set, the size read and set (to what it is), a job of their own
 * put in the foreground and taken back. */
static void
cmd_tty_use(const char *fdstr)
{
	long fd;
	struct termios t;
	struct winsize ws;
	pid_t job;

	if (parse_int(fdstr, &fd) < 0) {
		result("EINVAL");
		return;
	}
	if (tcgetattr((int)fd, &t) < 0 || tcsetattr((int)fd, TCSANOW, &t) < 0 ||
	    ioctl((int)fd, TIOCGWINSZ, &ws) < 0 || ioctl((int)fd, TIOCSWINSZ, &ws) < 0) {
		ok_or_errno(-1);
		return;
	}
	signal(SIGTTOU, SIG_IGN); /* as a shell does, to set the foreground */
	if (setpgid(0, 0) < 0 || tcsetpgrp((int)fd, getpgrp()) < 0) {
		ok_or_errno(-1);
		return;
	}
	job = fork();
	if (job == 0) {
		setpgid(0, 0);
		pause();
		_exit(0);
	}
	int r = -1;
	errno = ENOTTY; /* the terminal did not name the job's group as foreground */
	if (job > 0 && setpgid(job, job) == 0 && tcsetpgrp((int)fd, job) == 0 &&
	    tcgetpgrp((int)fd) == job)
		r = tcsetpgrp((int)fd, getpgrp());
	int e = errno;
	if (job > 0) {
		kill(job, SIGKILL);
		waitpid(job, NULL, 0);
	}
	signal(SIGTTOU, SIG_DFL);
	errno = e;
	ok_or_errno(r);
}

static void
cmd_ctty(const char *fdstr)
{
	long fd;

	if (parse_int(fdstr, &fd) < 0) {
		result("EINVAL");
		return;
	}
	/* tcgetpgrp succeeds only on the caller's controlling terminal */
	ok_or_errno(tcgetpgrp((int)fd));
}

static void
cmd_sleep(const char *secs)
{
	long s;

	if (parse_int(secs, &s) < 0) {
		result("EINVAL");
		return;
	}
	result("ok started");
	for (unsigned left = (unsigned)s; left > 0;)
		left = sleep(left); /* a signal (SIGWINCH) does not cut it short */
	result("ok woke");
}

/* `tee PATH`: append every later result line to PATH too (the pane of a
 * tmux session is not the only place a test can read it from). */
static void
cmd_tee(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0) {
		ok_or_errno(-1);
		return;
	}
	if (tee_fd >= 0)
		close(tee_fd);
	tee_fd = fd;
	result("ok");
}

static volatile sig_atomic_t winched;

static void
on_winch(int sig)
{
	(void)sig;
	winched = 1;
}

static void
tty_size(char *buf, size_t len)
{
	struct winsize ws;

	if (ioctl(0, TIOCGWINSZ, &ws) == 0)
		snprintf(buf, len, "%ux%u", (unsigned)ws.ws_col, (unsigned)ws.ws_row);
	else
		snprintf(buf, len, "%s", strerrorname_np(errno));
}

/*
 * `winch SECS`: catch SIGWINCH, print "ready COLSxROWS" (stdin's size), then
 * wait up to SECS for the signal and print "ok COLSxROWS" as read after it,
 * or ETIMEDOUT.
 */
static void
cmd_winch(const char *secs)
{
	struct sigaction sa;
	char size[64];
	long s;

	if (parse_int(secs, &s) < 0) {
		result("EINVAL");
		return;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_winch;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGWINCH, &sa, NULL) != 0) {
		ok_or_errno(-1);
		return;
	}
	winched = 0;
	tty_size(size, sizeof size);
	result("ready %s", size);
	for (long ms = 0; !winched && ms < s * 1000; ms += 10)
		usleep(10000);
	if (!winched) {
		result("ETIMEDOUT");
		return;
	}
	tty_size(size, sizeof size);
	result("ok %s", size);
}

/*
 * The attacks on the sandbox's init take the host's pid namespace (the inode
 * of the test's /proc/self/ns/pid) and run only when this process is in
 * another one and pid 1 is bwrap: never against a real init.  Else "SKIP ...".
 */
static int
init_is_bwrap(const char *host_ns)
{
	char comm[64] = "";
	struct stat st;
	long ns;
	int fd = open("/proc/1/comm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, comm, sizeof comm - 1);

	if (fd >= 0)
		close(fd);
	if (n > 0)
		comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	if (parse_int(host_ns, &ns) < 0 || stat("/proc/self/ns/pid", &st) != 0) {
		result("SKIP no pid namespace to compare");
		return 0;
	}
	if ((long)st.st_ino == ns) {
		result("SKIP in the host's pid namespace");
		return 0;
	}
	if (strcmp(comm, "bwrap") != 0) {
		result("SKIP pid 1 is '%s', not bwrap", comm);
		return 0;
	}
	return 1;
}

/* `ptrace-init NS`: PTRACE_ATTACH then PTRACE_SEIZE of pid 1; "ATTACH SEIZE"
 * results, each ok or the errno.  A success is let go at once. */
static void
cmd_ptrace_init(const char *host_ns)
{
	char a[64], s[64];
	long r;

	if (!init_is_bwrap(host_ns))
		return;
	r = ptrace(PTRACE_ATTACH, 1, NULL, NULL);
	snprintf(a, sizeof a, "%s", r < 0 ? strerrorname_np(errno) : "ok");
	if (r == 0) {
		waitpid(1, NULL, __WALL);
		ptrace(PTRACE_DETACH, 1, NULL, NULL);
	}
	r = ptrace(PTRACE_SEIZE, 1, NULL, NULL);
	snprintf(s, sizeof s, "%s", r < 0 ? strerrorname_np(errno) : "ok");
	if (r == 0)
		ptrace(PTRACE_DETACH, 1, NULL, NULL);
	result("%s %s", a, s);
}

/* `vm-writev NS`: process_vm_writev of one byte to address 1 of pid 1.
 * Allowed, the kernel gets as far as the address: EFAULT, nothing written. */
static void
cmd_vm_writev(const char *host_ns)
{
	char c = 0;
	struct iovec local = { &c, 1 }, remote = { (void *)1, 1 };

	if (!init_is_bwrap(host_ns))
		return;
	long r = syscall(SYS_process_vm_writev, 1, &local, 1UL, &remote, 1UL, 0UL);
	if (r < 0 && errno == EFAULT)
		result("ok reached (EFAULT)");
	else
		ok_or_errno(r);
}

/* `pidfd-getfd NS`: pidfd_open(1), then pidfd_getfd of its descriptor 0. */
static void
cmd_pidfd_getfd(const char *host_ns)
{
	if (!init_is_bwrap(host_ns))
		return;
	long pfd = syscall(SYS_pidfd_open, 1, 0);
	if (pfd < 0) {
		result("pidfd_open %s", strerrorname_np(errno));
		return;
	}
	long fd = syscall(SYS_pidfd_getfd, (int)pfd, 0, 0);
	if (fd >= 0)
		close((int)fd);
	close((int)pfd);
	ok_or_errno(fd);
}

static void
prctl_pdeathsig_clear(void)
{
	prctl(PR_SET_PDEATHSIG, 0);
}

/* `daemon SECS MARKER`: a grandchild in its own session (setsid, double
 * fork), parent-death signal cleared, that sleeps SECS; its argv (this
 * probe's) holds MARKER, by which the test finds it. */
static void
cmd_daemon(const char *secs)
{
	long s;
	pid_t pid;

	if (parse_int(secs, &s) < 0) {
		result("EINVAL");
		return;
	}
	pid = fork();
	if (pid < 0) {
		ok_or_errno(-1);
		return;
	}
	if (pid == 0) {
		setsid();
		if (fork() != 0)
			_exit(0);
		prctl_pdeathsig_clear();
		signal(SIGHUP, SIG_IGN);
		for (int fd = 0; fd < 3; fd++) {
			int n = open("/dev/null", O_RDWR);
			if (n >= 0 && n != fd) {
				dup2(n, fd);
				close(n);
			}
		}
		if (tee_fd >= 0)
			close(tee_fd);
		for (unsigned left = (unsigned)s; left > 0;)
			left = sleep(left);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	result("ok started");
}

struct cmd {
	const char *name;
	int nargs;
};

static const struct cmd cmds[] = {
	{ "read", 1 }, { "write", 2 }, { "open-write", 1 }, { "mkdir", 1 }, { "rename", 2 },
	{ "unlink", 1 }, { "rmdir", 1 }, { "symlink", 2 }, { "stat", 1 }, { "ls", 1 },
	{ "status", 0 }, { "fds", 0 }, { "pids", 0 }, { "env", 0 }, { "getenv", 1 },
	{ "uid", 0 }, { "cwd", 0 }, { "socket", 1 }, { "ifaddrs", 0 }, { "connect-tcp", 2 },
	{ "connect-abstract", 1 }, { "connect-unix", 1 }, { "syscall", 1 },
	{ "tiocsti", 1 }, { "tiocsti-high", 1 }, { "tioclinux", 1 }, { "ctty", 1 },
	{ "tiocsetd", 1 }, { "tioccons", 1 }, { "tiocsctty-steal", 1 }, { "pty-ctty", 0 },
	{ "tty-use", 1 }, { "open-tty", 0 }, { "sleep", 2 }, { "exit", 1 }, { "tee", 1 },
	{ "winch", 1 }, { "ptrace-init", 1 }, { "vm-writev", 1 }, { "pidfd-getfd", 1 },
	{ "daemon", 2 },
};

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc;) {
		const struct cmd *c = NULL;
		char line[4096];
		char **a;

		for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
			if (strcmp(cmds[k].name, argv[i]) == 0)
				c = &cmds[k];
		if (c == NULL || i + c->nargs >= argc) {
			fprintf(stderr, "probe: bad command '%s'\n", argv[i]);
			return 2;
		}
		a = argv + i + 1;
		snprintf(line, sizeof line, "%s", argv[i]);
		for (int k = 0; k < c->nargs; k++)
			snprintf(line + strlen(line), sizeof line - strlen(line), " %s", a[k]);
		cmdline = line;
		i += 1 + c->nargs;

		if (strcmp(c->name, "read") == 0)
			cmd_read(a[0]);
		else if (strcmp(c->name, "write") == 0)
			cmd_write(a[0], a[1]);
		else if (strcmp(c->name, "open-write") == 0) {
			int fd = open(a[0], O_WRONLY | O_CLOEXEC);
			ok_or_errno(fd);
			if (fd >= 0)
				close(fd);
		} else if (strcmp(c->name, "mkdir") == 0)
			ok_or_errno(mkdir(a[0], 0755));
		else if (strcmp(c->name, "rename") == 0)
			ok_or_errno(rename(a[0], a[1]));
		else if (strcmp(c->name, "unlink") == 0)
			ok_or_errno(unlink(a[0]));
		else if (strcmp(c->name, "rmdir") == 0)
			ok_or_errno(rmdir(a[0]));
		else if (strcmp(c->name, "symlink") == 0)
			ok_or_errno(symlink(a[0], a[1]));
		else if (strcmp(c->name, "stat") == 0) {
			struct stat st;
			ok_or_errno(stat(a[0], &st));
		} else if (strcmp(c->name, "ls") == 0)
			cmd_ls(a[0]);
		else if (strcmp(c->name, "status") == 0)
			cmd_status();
		else if (strcmp(c->name, "fds") == 0)
			cmd_fds();
		else if (strcmp(c->name, "pids") == 0)
			cmd_pids();
		else if (strcmp(c->name, "env") == 0)
			cmd_env();
		else if (strcmp(c->name, "getenv") == 0)
			cmd_getenv(a[0]);
		else if (strcmp(c->name, "uid") == 0)
			result("ok %u", (unsigned)getuid());
		else if (strcmp(c->name, "cwd") == 0) {
			char buf[4096];
			if (getcwd(buf, sizeof buf) == NULL)
				ok_or_errno(-1);
			else
				result("ok %s", buf);
		} else if (strcmp(c->name, "socket") == 0)
			cmd_socket(a[0]);
		else if (strcmp(c->name, "ifaddrs") == 0)
			cmd_ifaddrs();
		else if (strcmp(c->name, "connect-tcp") == 0)
			cmd_connect_tcp(a[0], a[1]);
		else if (strcmp(c->name, "connect-abstract") == 0)
			cmd_connect_unix(a[0], 1);
		else if (strcmp(c->name, "connect-unix") == 0)
			cmd_connect_unix(a[0], 0);
		else if (strcmp(c->name, "syscall") == 0)
			cmd_syscall(a[0]);
		else if (strcmp(c->name, "tiocsti") == 0)
			cmd_tiocsti(a[0], 0);
		else if (strcmp(c->name, "tiocsti-high") == 0)
			cmd_tiocsti(a[0], 1);
		else if (strcmp(c->name, "tioclinux") == 0)
			cmd_tioclinux(a[0]);
		else if (strcmp(c->name, "tiocsetd") == 0)
			cmd_tiocsetd(a[0]);
		else if (strcmp(c->name, "tioccons") == 0)
			cmd_tioccons(a[0]);
		else if (strcmp(c->name, "tiocsctty-steal") == 0)
			cmd_tiocsctty_steal(a[0]);
		else if (strcmp(c->name, "pty-ctty") == 0)
			cmd_pty_ctty();
		else if (strcmp(c->name, "tty-use") == 0)
			cmd_tty_use(a[0]);
		else if (strcmp(c->name, "ctty") == 0)
			cmd_ctty(a[0]);
		else if (strcmp(c->name, "open-tty") == 0) {
			int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
			ok_or_errno(fd);
			if (fd >= 0)
				close(fd);
		} else if (strcmp(c->name, "sleep") == 0)
			cmd_sleep(a[0]); /* a[1] is a marker the test finds the process by */
		else if (strcmp(c->name, "tee") == 0)
			cmd_tee(a[0]);
		else if (strcmp(c->name, "winch") == 0)
			cmd_winch(a[0]);
		else if (strcmp(c->name, "ptrace-init") == 0)
			cmd_ptrace_init(a[0]);
		else if (strcmp(c->name, "vm-writev") == 0)
			cmd_vm_writev(a[0]);
		else if (strcmp(c->name, "pidfd-getfd") == 0)
			cmd_pidfd_getfd(a[0]);
		else if (strcmp(c->name, "daemon") == 0)
			cmd_daemon(a[0]); /* a[1]: the marker, as for sleep */
		else if (strcmp(c->name, "exit") == 0) {
			long code;
			return parse_int(a[0], &code) == 0 ? (int)code : 2;
		}
	}
	return 0;
}
