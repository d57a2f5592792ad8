/* events.c: the harnesses' own events: per-session files in hqt's runtime
 * directory, and reading what their latest lines say (events.h). */
#include "events.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

char *
events_dir(const char *db, bool make)
{
	char *hqt, *top, *dir;
	struct stat st;

	/* The file the database is (symlinks followed, as SQLite opens it). */
	if (db == NULL || stat(db, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (hqt = hqt_runtime_dir(make)) == NULL)
		return NULL;
	top = xasprintf("%s/events", hqt);
	dir = xasprintf("%s/%llx-%llx", top, (unsigned long long)st.st_dev,
			(unsigned long long)st.st_ino);
	free(hqt);
	if (make ? !make_private_dir(top) || !make_private_dir(dir)
		 : !private_dir(top) || !private_dir(dir)) {
		free(top);
		free(dir);
		return NULL;
	}
	free(top);
	return dir;
}

char *
events_path_in(const char *dir, long long id)
{
	return dir != NULL && id > 0 ? xasprintf("%s/%lld", dir, id) : NULL;
}

char *
events_path(const char *db, long long id, bool make)
{
	char *dir, *path;
	struct stat st;
	int fd;

	if (id <= 0 || (dir = events_dir(db, make)) == NULL)
		return NULL;
	path = events_path_in(dir, id);
	free(dir);
	if (!make)
		return path;
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077) != 0) {
		if (fd >= 0)
			close(fd);
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

void
events_reset(const char *path)
{
	int fd;

	if (path == NULL)
		return;
	fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
}

void
events_remove(const char *db, long long id)
{
	char *path = events_path(db, id, false);

	if (path != NULL)
		unlink(path);
	free(path);
}

char *
events_helper(void)
{
	char *helper = self_sibling("hqt-event");

	if (helper == NULL)
		return NULL;
	if (access(helper, X_OK) != 0) {
		free(helper);
		return NULL;
	}
	return helper;
}

/* Lines of the last `tail` bytes of fd (size bytes), newest first, into out. */
static void
scan_tail(const struct harness *h, int fd, off_t size, size_t tail, struct events_seen *out)
{
	off_t from = size > (off_t)tail ? size - (off_t)tail : 0;
	char *buf = xmalloc(tail + 1);
	ssize_t n, got = 0;

	while ((size_t)got < tail &&
	       (n = pread(fd, buf + got, tail - (size_t)got, from + got)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		got += n;
	}
	/*
	 * Lines newest first.  Only whole lines count: the part before the
	 * first '\n' of a tail that starts mid-file is cut, and so is an
	 * unfinished last line (a writer not done, or junk without an end).
	 */
	{
		char *start = buf, *end = buf + got;

		if (from > 0) {
			char *nl = memchr(buf, '\n', (size_t)got);
			start = nl != NULL ? nl + 1 : end;
		}
		while (end > start && end[-1] != '\n')
			end--;
		for (int k = 0; end > start && k < EVENTS_LINES &&
				(out->status == HQT_STATUS_UNKNOWN || out->id[0] == '\0'); k++) {
			char *line_end = end - 1, *line = line_end, id[37];
			long long at;
			enum hqt_status s;

			while (line > start && line[-1] != '\n')
				line--;
			s = harness_parse_event(h, line, (size_t)(line_end - line), id, &at);
			if (out->status == HQT_STATUS_UNKNOWN && s != HQT_STATUS_UNKNOWN && at > 0) {
				out->status = s;
				out->at_ms = at;
			}
			if (out->id[0] == '\0' && id[0] != '\0')
				memcpy(out->id, id, sizeof id);
			end = line;
		}
	}
	free(buf);
}

int
events_latest(const struct harness *h, const char *path, long long not_before,
	      struct events_seen *out)
{
	struct stat st;
	int fd;

	memset(out, 0, sizeof *out);
	out->status = HQT_STATUS_UNKNOWN;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	if ((long long)st.st_mtim.tv_sec < not_before) {
		close(fd);
		return 0;
	}
	/* The newest lines nearly always say it: a short read first, the
	 * whole tail only when they do not. */
	if (st.st_size > 0)
		scan_tail(h, fd, st.st_size, EVENTS_SHORT_TAIL, out);
	if (st.st_size > EVENTS_SHORT_TAIL &&
	    (out->status == HQT_STATUS_UNKNOWN || out->id[0] == '\0')) {
		memset(out, 0, sizeof *out);
		out->status = HQT_STATUS_UNKNOWN;
		scan_tail(h, fd, st.st_size, EVENTS_TAIL, out);
	}
	close(fd);
	return 0;
}

enum hqt_status
events_decide(enum hqt_status screen, long long activity, long long now, int active_s,
	      enum hqt_status ev, long long ev_ms, long long spawned_at)
{
	long long ev_s = ev_ms / 1000;

	/* The pane's activity is in whole seconds: an event in the same
	 * second as the last output is the newer evidence (the harness
	 * redraws right after its own event). */
	if (ev != HQT_STATUS_UNKNOWN && ev_s >= spawned_at && ev_s >= activity)
		return ev;
	if (screen != HQT_STATUS_UNKNOWN)
		return screen;
	return now - activity <= active_s ? HQT_STATUS_WORKING : HQT_STATUS_WAITING;
}
