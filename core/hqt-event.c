/* hqt-event: what a harness runs for each of its events (Claude Code's
 * hooks, codex's notify); appends one short JSON line to $HQT_EVENT_FILE.
 *
 * It runs inside the harness, sandboxed or not, at every event, so it is
 * small and quick, links only libc and jansson, prints nothing (a hook's
 * stdout would reach the model as context) and always exits 0 (a hook that
 * exits 2 blocks the harness).  The payload is the last argument (codex's
 * notify: `prog '<json>'`) or, without one, stdin (claude's hooks).  What
 * it writes is the payload shrunk to what a status reader needs: members
 * that are strings longer than STR_MAX dropped, array items cut to
 * STR_MAX bytes (at a character boundary), arrays to their first
 * ARRAY_MAX scalars, objects inside it and long keys dropped, so that a line
 * stays a few hundred bytes (cheap to parse for every session at every
 * look) and goes out in one write(2) (O_APPEND: lines of two hooks at once
 * do not interleave), with the time it was written (HQT_EVENT_TIME_KEY, unix
 * milliseconds).  The file is hqt's (created 0600 by the launch);
 * a missing one means events are off, and nothing is created.  It never
 * grows past FILE_MAX by this helper's lines: one that would pass it
 * starts the file again (restart). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hqt/plugin.h"

#define INPUT_MAX  ((size_t)16 << 20)  /* a bigger payload is dropped */
#define STR_MAX    64
#define ARRAY_MAX  2
#define MEMBERS_MAX 32
#define KEY_MAX    32
#define LINE_MAX_BYTES 8192
/*
 * The file's bound.  Refusing to write past it would freeze the status at
 * the bound; the reader reads only the last 64 KiB (events.c's
 * EVENTS_TAIL), so the file starts again instead, with that much of its
 * end (KEEP_MAX): the reader finds what it found before, whatever the new
 * line says.  1 MiB is about 4000 lines (a Stop is ~250 bytes): a restart
 * every few hundred turns, a few at most on the runtime tmpfs per session.
 */
#define FILE_MAX   ((off_t)1 << 20)
#define KEEP_MAX   ((off_t)65536)

static json_t *shrink(json_t *v, int depth);

static json_t *
shrink_string(const char *s, size_t n)
{
	if (n > STR_MAX) {
		n = STR_MAX;
		/* back to the start of a UTF-8 character */
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	return json_stringn(s, n);
}

static json_t *
shrink(json_t *v, int depth)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		/* A member too long (a path, a prompt, a reply) serves no reader:
		 * dropped; an array's items are cut (codex's input-messages,
		 * whose start tells its title thread). */
		if (depth == 1 && json_string_length(v) > STR_MAX)
			return NULL;
		return shrink_string(json_string_value(v), json_string_length(v));
	case JSON_ARRAY: {
		json_t *a = json_array();
		size_t i;
		json_t *x;

		json_array_foreach(v, i, x) {
			if (i >= ARRAY_MAX)
				break;
			/* of the payload's own members, only scalars are kept */
			if (depth == 1 && (json_is_string(x) || json_is_number(x) || json_is_boolean(x)))
				json_array_append_new(a, shrink(x, depth + 1));
		}
		return a;
	}
	case JSON_OBJECT: {
		json_t *o, *x;
		const char *k;
		size_t n = 0;

		if (depth > 0)
			return NULL;
		o = json_object();
		json_object_foreach(v, k, x) {
			json_t *y;

			if (n >= MEMBERS_MAX || strlen(k) > KEY_MAX)
				continue;
			if ((y = shrink(x, depth + 1)) != NULL) {
				json_object_set_new(o, k, y);
				n++;
			}
		}
		return o;
	}
	default:
		return json_incref(v);
	}
}

static char *
read_stdin(size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);

	while (buf != NULL) {
		ssize_t r;

		if (n == cap) {
			char *nb;

			if (cap >= INPUT_MAX) {
				free(buf);
				return NULL;
			}
			cap *= 2;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		r = read(0, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return buf;
}

/* n bytes at off of fd into buf: how many were read (fewer at the end). */
static size_t
read_at(int fd, char *buf, size_t n, off_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, off + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

static void
write_all(int fd, const char *buf, size_t len)
{
	while (write(fd, buf, len) < 0 && errno == EINTR)
		;
}

/*
 * The file (size bytes) would pass FILE_MAX with line: start it again with
 * the whole lines of its last KEEP_MAX bytes, then line, in one write (a
 * reader between the truncate and the write sees an empty file: the screen
 * decides that once).  A line another hook appends between the read and
 * the truncate is lost; the next event says the same again.  When the
 * file cannot be truncated, nothing is written: it never passes the bound.
 */
static void
restart(int fd, off_t size, const char *line, size_t len)
{
	size_t keep = (size_t)(size > KEEP_MAX ? KEEP_MAX : size), got, start = 0;
	char *buf = malloc(keep + len);

	if (buf == NULL)
		return;
	got = read_at(fd, buf, keep, size - (off_t)keep);
	/* From the first line that starts inside the tail (all of it when the
	 * tail is the whole file) to the end of the last whole one: an
	 * unfinished line (junk, a writer not done) is not kept. */
	if (size > (off_t)keep) {
		char *nl = memchr(buf, '\n', got);
		start = nl != NULL ? (size_t)(nl - buf) + 1 : got;
	}
	while (got > start && buf[got - 1] != '\n')
		got--;
	memcpy(buf + got, line, len);
	if (ftruncate(fd, 0) == 0)
		write_all(fd, buf + start, got - start + len);
	free(buf);
}

static void
append(const char *path, char *line, size_t len)
{
	int fd = open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	char last = '\n';

	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	/* (the '\n' below counted too) */
	if (st.st_size > FILE_MAX - (off_t)len - 1) {
		restart(fd, st.st_size, line, len);
		close(fd);
		return;
	}
	/* A line left unfinished (by whoever can write the file) would swallow
	 * this one: start on a line of its own.  line has a byte before it for
	 * that (see main). */
	if (st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') {
		line--;
		len++;
		*line = '\n';
	}
	write_all(fd, line, len);
	close(fd);
}

int
main(int argc, char **argv)
{
	const char *path = getenv(HQT_EVENT_FILE_ENV);
	char *input = NULL, *out;
	size_t len = 0;
	json_t *v, *small;
	json_error_t e;

	if (argc > 1) {
		input = strdup(argv[argc - 1]);
		len = input != NULL ? strlen(input) : 0;
	} else {
		input = read_stdin(&len);
	}
	if (path == NULL || path[0] != '/' || input == NULL)
		goto out;
	v = json_loadb(input, len, JSON_REJECT_DUPLICATES, &e);
	if (v == NULL || !json_is_object(v)) {
		json_decref(v);
		goto out;
	}
	/* When it happened, for the reader: each line dated, not the file;
	 * first, where the reader finds it without parsing the line. */
	{
		struct timespec ts;
		json_t *at, *sh = shrink(v, 0);

		clock_gettime(CLOCK_REALTIME, &ts);
		at = json_integer((json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
		small = json_object();
		json_object_set(small, HQT_EVENT_TIME_KEY, at);
		json_object_update(small, sh);
		json_decref(sh);
		json_object_set(small, HQT_EVENT_TIME_KEY, at);
		json_decref(at);
	}
	json_decref(v);
	out = json_dumps(small, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(small);
	if (out != NULL) {
		size_t n = strlen(out);

		if (n < LINE_MAX_BYTES) {
			/* a byte of room before it, and the '\n' after */
			char *line = malloc(n + 2);

			if (line != NULL) {
				memcpy(line + 1, out, n);
				line[n + 1] = '\n';
				append(path, line + 1, n + 1);
				free(line);
			}
		}
		free(out);
	}
out:
	free(input);
	return 0;
}
