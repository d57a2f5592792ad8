/* watch.c: what tells the TUI that something it shows may have changed, so
 * that it reads tmux only then instead of every second (docs/decisions.md,
 * "The idle TUI asks nothing"):
 *
 *   - tmux itself, through a control-mode client attached to hqt's session
 *     (tmux_watch_*): a pane printed, a window came, went or was resized,
 *     the session or the server ended;
 *   - the harnesses' event files (inotify on the database's events
 *     directory): a hook or a notify said working, waiting or needs you;
 *   - the panes' own processes (a pidfd each, in one epoll set): tmux says
 *     nothing when a pane that remains on exit dies;
 *   - the database's files, two stat() calls a second (tui_refresh_wanted):
 *     another hqt started, killed or renamed a session.
 *
 * Whatever cannot be watched (no hqt session yet, a tmux that refuses the
 * control client, no pidfd_open, descriptors run out) falls back to the
 * read every second it replaces. */
#include "tui-int.h"
#include "app.h"
#include "events.h"
#include "util.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A failed control client is tried again this long after. */
#define WATCH_RETRY_MS 5000

void
tui_watch_init(struct tui *t)
{
	struct rlimit rl;

	t->watch.pid = 0;
	t->watch.in = t->watch.out = -1;
	t->watching = false;
	t->ino_wd = -1;
	t->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	t->ep_fd = epoll_create1(EPOLL_CLOEXEC);
	t->pids_ok = t->ep_fd >= 0;
	/* A pidfd per session: 1000 sessions need more than the usual soft
	 * limit of 1024 descriptors. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void
pids_forget(struct tui *t, size_t i)
{
	if (t->ep_fd >= 0)
		(void)epoll_ctl(t->ep_fd, EPOLL_CTL_DEL, t->pids[i].fd, NULL);
	close(t->pids[i].fd);
	t->pids[i] = t->pids[--t->npids];
}

void
tui_watch_free(struct tui *t)
{
	tmux_watch_stop(&t->watch);
	t->watching = false;
	while (t->npids > 0)
		pids_forget(t, t->npids - 1);
	free(t->pids);
	t->pids = NULL;
	t->pids_cap = 0;
	if (t->ino_fd >= 0)
		close(t->ino_fd);
	if (t->ep_fd >= 0)
		close(t->ep_fd);
	t->ino_fd = t->ep_fd = -1;
}

void
tui_watch_stop_client(struct tui *t)
{
	tmux_watch_stop(&t->watch);
	t->watching = false;
	t->watch_retry_at = 0;
}

/* A read is wanted gap ms after the last one (or now, if that has passed). */
void
tui_watch_schedule(struct tui *t, long long now, long long gap)
{
	long long at = t->last_refresh + gap;

	if (at < now)
		at = now;
	if (t->due == 0 || at < t->due)
		t->due = at;
}

/* The pidfds follow the pane list: one for each live pane of a session's
 * window, none for a pane gone. */
static void
pids_sync(struct tui *t, long long now)
{
	/* An ended process whose pane reads dead (or is gone) is done with. */
	for (size_t i = 0; i < t->nended;) {
		bool alive = false;

		for (size_t j = 0; j < t->panes.n && !alive; j++)
			alive = !t->panes.v[j].dead && t->panes.v[j].pid == t->ended[i];
		if (alive)
			i++;
		else
			t->ended[i] = t->ended[--t->nended];
	}
	for (size_t i = 0; i < t->npids;) {
		bool listed = false;

		for (size_t j = 0; j < t->panes.n && !listed; j++)
			listed = !t->panes.v[j].dead && t->panes.v[j].pid == t->pids[i].pid;
		if (listed)
			i++;
		else
			pids_forget(t, i);
	}
	for (size_t j = 0; j < t->panes.n && t->pids_ok; j++) {
		const struct tmux_pane *p = &t->panes.v[j];
		struct epoll_event ev;
		bool have = false;
		int fd;

		if (p->dead || p->pid <= 0 || strncmp(p->window_name, "hqt-", 4) != 0 ||
		    strcmp(p->window_name, TMUX_HOME_WINDOW) == 0)
			continue;
		for (size_t i = 0; i < t->npids && !have; i++)
			have = t->pids[i].pid == p->pid;
		if (have)
			continue;
		/* Its pidfd fired and tmux still lists it alive: it has not
		 * reaped it yet.  Read again soon, without a new pidfd (it
		 * would fire at once, a zombie's). */
		for (size_t i = 0; i < t->nended && !have; i++)
			have = t->ended[i] == (pid_t)p->pid;
		if (have) {
			tui_watch_schedule(t, now, TUI_REAP_MS);
			continue;
		}
		fd = (int)syscall(SYS_pidfd_open, (pid_t)p->pid, 0);
		if (fd < 0) {
			if (errno == ESRCH)  /* gone already: tmux will say so */
				tui_watch_schedule(t, now, TUI_EVENT_MS);
			else
				t->pids_ok = false;  /* ENOSYS, EMFILE: read every second */
			continue;
		}
		memset(&ev, 0, sizeof ev);
		ev.events = EPOLLIN;
		ev.data.fd = fd;
		if (epoll_ctl(t->ep_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			t->pids_ok = false;
			continue;
		}
		if (t->npids == t->pids_cap) {
			t->pids_cap = t->pids_cap != 0 ? 2 * t->pids_cap : 64;
			t->pids = xreallocarray(t->pids, t->pids_cap, sizeof *t->pids);
		}
		t->pids[t->npids].pid = (pid_t)p->pid;
		t->pids[t->npids++].fd = fd;
	}
}

void
tui_watch_after_refresh(struct tui *t, long long now)
{
	/* The event files: their directory exists once a session with events
	 * started; looked for again after each read until then. */
	if (t->ino_fd >= 0 && t->ino_wd < 0) {
		char *dir = events_dir(app_db_path(t->app), false);

		if (dir != NULL)
			t->ino_wd = inotify_add_watch(t->ino_fd, dir,
						      IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE |
							      IN_MOVED_TO | IN_DELETE | IN_ATTRIB);
		free(dir);
	}
	pids_sync(t, now);
	/* The control client, once hqt's session is there to attach to. */
	if (!t->watching && t->panes_ok && t->panes.n > 0 && now >= t->watch_retry_at) {
		char *err = NULL;

		if (tmux_watch_start(&t->app->tmux, &t->watch, &err) == 0)
			t->watching = true;
		else
			t->watch_retry_at = now + WATCH_RETRY_MS;
		free(err);
	}
}

size_t
tui_watch_fds(const struct tui *t, struct pollfd *p, size_t max)
{
	size_t n = 0;

	if (t->watching && n < max)
		p[n++] = (struct pollfd){ t->watch.out, POLLIN, 0 };
	if (t->ino_fd >= 0 && t->ino_wd >= 0 && n < max)
		p[n++] = (struct pollfd){ t->ino_fd, POLLIN, 0 };
	if (t->ep_fd >= 0 && t->npids > 0 && n < max)
		p[n++] = (struct pollfd){ t->ep_fd, POLLIN, 0 };
	return n;
}

void
tui_watch_handle(struct tui *t, const struct pollfd *p, size_t n, long long now)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i].revents == 0)
			continue;
		if (t->watching && p[i].fd == t->watch.out) {
			int bits = tmux_watch_read(&t->watch);

			if (bits & TMUX_WATCH_ENDED) {
				/* The session or the server went: read now, and
				 * attach again once there is a session. */
				tui_watch_stop_client(t);
				tui_watch_schedule(t, now, TUI_EVENT_MS);
			} else if (bits & TMUX_WATCH_WINDOWS)
				tui_watch_schedule(t, now, TUI_EVENT_MS);
			else if (bits & TMUX_WATCH_OUTPUT) {
				t->output_seen = true;
				tui_watch_schedule(t, now, TUI_OUTPUT_MS);
			}
		} else if (p[i].fd == t->ino_fd) {
			char buf[4096];

			while (read(t->ino_fd, buf, sizeof buf) > 0)
				;
			t->events_seen = true;
			tui_watch_schedule(t, now, TUI_EVENT_MS);
		} else if (p[i].fd == t->ep_fd) {
			struct epoll_event ev[64];
			int k = epoll_wait(t->ep_fd, ev, 64, 0);

			/* A pane's process ended: forgotten (tmux makes the pane
			 * dead or gone), and read at once. */
			for (int e = 0; e < k; e++)
				for (size_t j = 0; j < t->npids; j++)
					if (t->pids[j].fd == ev[e].data.fd) {
						if (t->nended < ARRAY_SIZE(t->ended))
							t->ended[t->nended++] = t->pids[j].pid;
						pids_forget(t, j);
						break;
					}
			if (k > 0)
				tui_watch_schedule(t, now, 0);
		}
	}
}
