/* relay.c: the bridge of net = allow: a listener inside the sandbox's
 * network namespace, made from outside, and the bytes it accepts relayed
 * to the session's proxy on the host, unparsed (SPEC §8.11).  Links with
 * libc, util.c and strv.c only (hqt-launch). */
#include "sandbox-int.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long the listener may take: bwrap has made the namespace and brought
 * up lo before it reads --block-fd, so this is only a busy machine. */
#define LISTEN_TIMEOUT_MS 5000
/* How long a connection waits for the proxy to listen (it starts beside
 * the harness, and takes about 0.15 s). */
#define PROXY_WAIT_MS 10000
#define RELAY_MAX_CONNS 256
#define RELAY_BUF 65536

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
send_fd(int sock, int fd)
{
	char byte = 'L';
	struct iovec iov = { &byte, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof u.buf };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	memset(u.buf, 0, sizeof u.buf);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* The descriptor sent on sock, or -1 (with the child's one line of why in
 * why, when it sent one instead). */
static int
recv_fd(int sock, char *why, size_t len)
{
	char buf[256];
	struct iovec iov = { buf, sizeof buf - 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof u.buf };
	struct pollfd p = { sock, POLLIN, 0 };
	ssize_t n;
	int fd = -1;

	if (poll(&p, 1, LISTEN_TIMEOUT_MS) != 1) {
		snprintf(why, len, "no listener within %d s", LISTEN_TIMEOUT_MS / 1000);
		return -1;
	}
	n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL; c != NULL;
	     c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (fd < 0) {
		buf[n > 0 ? n : 0] = '\0';
		snprintf(why, len, "%s", n > 1 ? buf : "the helper sent nothing");
	}
	return fd;
}

/*
 * In the child: join init's network namespace (through the user namespace
 * that owns it, which a process of ours may enter), make the listener and
 * send it back.  A socket keeps the namespace it was made in, so the
 * parent, still in the host's, accepts on it.  The child is single-threaded
 * (setns of a user namespace needs that) and never comes back.
 */
static void __attribute__((noreturn))
listen_child(int sock, pid_t init, int port)
{
	char path[64], msg[200];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int nfd, ufd, s = -1;
	long long end = now_ms() + LISTEN_TIMEOUT_MS;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snprintf(path, sizeof path, "/proc/%d/ns/net", (int)init);
	nfd = open(path, O_RDONLY | O_CLOEXEC);
	ufd = nfd >= 0 ? ioctl(nfd, NS_GET_USERNS) : -1;
	if (ufd < 0 || setns(ufd, CLONE_NEWUSER) != 0 || setns(nfd, CLONE_NEWNET) != 0) {
		snprintf(msg, sizeof msg, "cannot join the sandbox's network: %s", strerror(errno));
		goto fail;
	}
	for (;;) {
		s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 && listen(s, 128) == 0)
			break;
		snprintf(msg, sizeof msg, "cannot listen on 127.0.0.1:%d in the sandbox: %s", port,
			 strerror(errno));
		if (s >= 0)
			close(s);
		/* lo not up yet: EADDRNOTAVAIL */
		if (errno != EADDRNOTAVAIL || now_ms() >= end)
			goto fail;
		usleep(5000);
	}
	_exit(send_fd(sock, s) == 0 ? 0 : 1);
fail:
	(void)!write(sock, msg, strlen(msg));
	_exit(1);
}

int
relay_listen(pid_t init, int port, char **err)
{
	char why[256] = "";
	int sp[2], fd, status;
	pid_t c;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0) {
		set_err(err, "sandbox: the network bridge: %s", strerror(errno));
		return -1;
	}
	c = fork();
	if (c < 0) {
		set_err(err, "sandbox: the network bridge: %s", strerror(errno));
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	if (c == 0) {
		close(sp[0]);
		listen_child(sp[1], init, port);
	}
	close(sp[1]);
	fd = recv_fd(sp[0], why, sizeof why);
	close(sp[0]);
	if (fd < 0)
		kill(c, SIGKILL);
	while (waitpid(c, &status, 0) < 0 && errno == EINTR)
		;
	if (fd < 0)
		set_err(err, "sandbox: the network bridge: %s", why);
	return fd;
}

/* One relayed connection: a, the sandbox's end; b, the proxy's. */
struct conn {
	int a, b;
	bool connected;          /* b's connect is done */
	long long retry_at;      /* b refused: the proxy not up yet; try again then */
	long long give_up_at;
	bool a_eof, b_eof;       /* read side ended (shut the other's write when drained) */
	char ab[RELAY_BUF], ba[RELAY_BUF];
	size_t nab, nba;         /* bytes waiting in each */
};

static int
proxy_connect(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0)
		return -1;
	if (connect(s, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
		close(s);
		return -1;
	}
	return s;
}

static void
conn_close(struct conn **v, size_t *n, size_t i)
{
	if (v[i]->a >= 0)
		close(v[i]->a);
	if (v[i]->b >= 0)
		close(v[i]->b);
	free(v[i]);
	v[i] = v[--*n];
}

/* Move what can move between fd and the buffers; false when the
 * connection is over. */
static bool
pump(int from, int to, char *buf, size_t *n, bool *eof, short rev_from, short rev_to)
{
	if ((rev_from & (POLLIN | POLLHUP | POLLERR)) && !*eof && *n < RELAY_BUF) {
		ssize_t r = read(from, buf + *n, RELAY_BUF - *n);
		if (r > 0)
			*n += (size_t)r;
		else if (r == 0 || (errno != EAGAIN && errno != EINTR))
			*eof = true;
	}
	if ((rev_to & POLLOUT) && *n > 0) {
		ssize_t w = send(to, buf, *n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			memmove(buf, buf + w, *n - (size_t)w);
			*n -= (size_t)w;
		} else if (w < 0 && errno != EAGAIN && errno != EINTR)
			return false;
	}
	if (*eof && *n == 0)
		shutdown(to, SHUT_WR);
	return true;
}

int
relay_run(int lfd, int port, const sigset_t *waited, int (*on_signal)(void *, int), void *arg)
{
	struct conn **v = xcalloc(RELAY_MAX_CONNS, sizeof *v);
	struct pollfd *p = xcalloc(2 + 2 * RELAY_MAX_CONNS, sizeof *p);
	size_t n = 0;
	int sfd = signalfd(-1, waited, SFD_CLOEXEC | SFD_NONBLOCK), rc = 0;

	if (sfd < 0) {
		free(v);
		free(p);
		return -1;
	}
	fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
	while (rc == 0) {
		long long now = now_ms();
		int timeout = -1;
		size_t k = 2;

		p[0] = (struct pollfd){ sfd, POLLIN, 0 };
		p[1] = (struct pollfd){ n < RELAY_MAX_CONNS ? lfd : -1, POLLIN, 0 };
		for (size_t i = 0; i < n; i++) {
			struct conn *c = v[i];
			short ea = 0, eb = 0;

			if (!c->connected) {
				if (c->b < 0) {
					int left = (int)(c->retry_at - now);
					if (left < 0)
						left = 0;
					if (timeout < 0 || left < timeout)
						timeout = left;
				} else
					eb = POLLOUT;
			} else {
				if (!c->a_eof && c->nab < RELAY_BUF)
					ea |= POLLIN;
				if (!c->b_eof && c->nba < RELAY_BUF)
					eb |= POLLIN;
				if (c->nab > 0)
					eb |= POLLOUT;
				if (c->nba > 0)
					ea |= POLLOUT;
			}
			/* An end with nothing to wait for is left out: poll reports
			 * a hang-up whatever it is asked, and would spin. */
			p[k++] = (struct pollfd){ c->connected && ea != 0 ? c->a : -1, ea, 0 };
			p[k++] = (struct pollfd){ eb != 0 ? c->b : -1, eb, 0 };
		}
		if (poll(p, k, timeout) < 0 && errno != EINTR)
			break;
		now = now_ms();
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si && rc == 0)
				rc = on_signal(arg, (int)si.ssi_signo);
		}
		/* The connections first: v changes below. */
		for (size_t i = n; i-- > 0;) {
			struct conn *c = v[i];
			short ra = p[2 + 2 * i].revents, rb = p[3 + 2 * i].revents;
			bool keep = true;

			if (!c->connected) {
				int e = 0;
				socklen_t el = sizeof e;

				if (c->b >= 0 && rb != 0) {
					if (getsockopt(c->b, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
						e = errno;
					if (e == 0) {
						c->connected = true;
						continue;
					}
					close(c->b);
					c->b = -1;
					c->retry_at = now + 50;
				}
				if (c->b < 0 && now >= c->retry_at) {
					if (now >= c->give_up_at)
						keep = false; /* no proxy: the client sees a close */
					else if ((c->b = proxy_connect(port)) < 0)
						c->retry_at = now + 50;
				}
			} else {
				keep = pump(c->a, c->b, c->ab, &c->nab, &c->a_eof, ra, rb) &&
				       pump(c->b, c->a, c->ba, &c->nba, &c->b_eof, rb, ra) &&
				       !(c->a_eof && c->b_eof && c->nab == 0 && c->nba == 0);
			}
			if (!keep)
				conn_close(v, &n, i);
		}
		if (p[1].revents & POLLIN) {
			int a;
			while (n < RELAY_MAX_CONNS &&
			       (a = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
				struct conn *c = xcalloc(1, sizeof *c);

				c->a = a;
				c->b = proxy_connect(port);
				c->retry_at = now + 50;
				c->give_up_at = now + PROXY_WAIT_MS;
				v[n++] = c;
			}
		}
	}
	while (n > 0)
		conn_close(v, &n, n - 1);
	close(sfd);
	free(v);
	free(p);
	return rc;
}
