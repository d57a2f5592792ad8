/* test-status-cache.c: the status cache's file (what it keeps, and that a
 * file cut short, gone bad, hostile or not ours is ignored, never trusted),
 * and the rule that says a screen is still the one read (tmux_seen_still). */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "status-cache.h"
#include "support.h"
#include "util.h"

static struct tmux_pane
pane(const char *id, long pid, long long activity)
{
	struct tmux_pane p = { .pane_id = (char *)id, .pid = pid, .activity = activity,
			       .width = 80, .height = 24 };
	return p;
}

/* ---- tmux_seen_still ---- */

Test(seen, still_only_when_read_a_whole_second_after_the_last_output)
{
	struct tmux_pane p = pane("%3", 100, 1000);
	struct tmux_seen s;

	tmux_seen_of(&s, &p, 1001);
	cr_expect(tmux_seen_still(&s, &p));
	/* read in the same second as the output: the output may be newer */
	tmux_seen_of(&s, &p, 1000);
	cr_expect_not(tmux_seen_still(&s, &p));
	/* a clock that went back */
	tmux_seen_of(&s, &p, 999);
	cr_expect_not(tmux_seen_still(&s, &p));
}

Test(seen, any_difference_is_a_change)
{
	struct tmux_pane p = pane("%3", 100, 1000), q;
	struct tmux_seen s;

	tmux_seen_of(&s, &p, 1005);
	q = p;
	q.activity = 1001;
	cr_expect_not(tmux_seen_still(&s, &q), "output since");
	q = p;
	q.pid = 101;
	cr_expect_not(tmux_seen_still(&s, &q), "respawned");
	q = p;
	q.pane_id = "%4";
	cr_expect_not(tmux_seen_still(&s, &q), "another pane");
	q = p;
	q.width = 100;
	cr_expect_not(tmux_seen_still(&s, &q), "resized");
	q = p;
	q.height = 10;
	cr_expect_not(tmux_seen_still(&s, &q), "resized");
	q = p;
	q.dead = true;
	cr_expect_not(tmux_seen_still(&s, &q), "dead");
	cr_expect_not(tmux_seen_still(NULL, &p));
	cr_expect_not(tmux_seen_still(&s, NULL));
	s.want = TMUX_WANT_SCREEN;
	cr_expect_not(tmux_seen_still(&s, &p), "not a seen to compare");
}

/* ---- the file ---- */

static struct status_cache
one_entry(void)
{
	struct status_cache c = { 0 };
	struct tmux_pane p = pane("%7", 4242, 1796170000);
	struct tmux_seen s;

	tmux_seen_of(&s, &p, 1796170002);
	status_cache_put(&c, 5, 0x0123456789abcdefull, &s, HQT_STATUS_NEEDS_INPUT);
	tmux_seen_of(&s, &p, 1796170009);
	status_cache_put(&c, 2, 0x1111111111111111ull, &s, HQT_STATUS_WORKING);
	return c;
}

Test(cache, round_trip)
{
	struct status_cache c = one_entry(), d = { 0 };
	size_t len;
	char *text = status_cache_format(&c, &len);
	struct status_cache_entry *e;

	cr_assert_eq(status_cache_parse(&d, text, len), 0, "%s", text);
	cr_assert_eq(d.n, 2);
	e = status_cache_find(&d, 5, 0x0123456789abcdefull);
	cr_assert_not_null(e);
	cr_expect_str_eq(e->seen.pane_id, "%7");
	cr_expect_eq(e->seen.pid, 4242);
	cr_expect_eq(e->seen.activity, 1796170000);
	cr_expect_eq(e->seen.at, 1796170002);
	cr_expect_eq(e->seen.width, 80);
	cr_expect_eq(e->seen.height, 24);
	cr_expect_eq(e->status, HQT_STATUS_NEEDS_INPUT);
	cr_expect_not_null(status_cache_find(&d, 2, 0x1111111111111111ull));
	/* read with another plugin or settings: not this entry */
	cr_expect_null(status_cache_find(&d, 5, 0x0123456789abcdeeull));
	cr_expect_null(status_cache_find(&d, 3, 0x0123456789abcdefull));
	free(text);
	status_cache_free(&c);
	status_cache_free(&d);
}

/* A text that parses, with one change applied, must be refused whole. */
static void
expect_refused(const char *text, const char *why)
{
	struct status_cache d = { 0 };

	cr_expect_eq(status_cache_parse(&d, text, strlen(text)), -1, "%s: %s", why, text);
	cr_expect_eq(d.n, 0, "%s", why);
	status_cache_free(&d);
}

Test(cache, a_file_cut_short_or_gone_bad_is_refused_whole)
{
	struct status_cache c = one_entry();
	size_t len;
	char *text = status_cache_format(&c, &len), *t;

	/* every length short of the whole */
	for (size_t n = 0; n < len; n++) {
		struct status_cache d = { 0 };
		cr_expect_eq(status_cache_parse(&d, text, n), -1, "cut at %zu", n);
		cr_expect_eq(d.n, 0);
		status_cache_free(&d);
	}
	/* every byte changed (a bit flipped) */
	t = xstrdup(text);
	for (size_t i = 0; i < len; i++) {
		t[i] ^= 0x04;
		if (t[i] != '\0') {
			struct status_cache d = { 0 };
			cr_expect_eq(status_cache_parse(&d, t, len), -1, "byte %zu flipped: %s", i, t);
			cr_expect_eq(d.n, 0);
			status_cache_free(&d);
		}
		t[i] ^= 0x04;
	}
	free(t);
	expect_refused("", "empty");
	expect_refused("hqt-status-cache 2\nend 0 0000000000000000\n", "another format");
	expect_refused("garbage\n", "garbage");
	{
		char with_nul[] = "hqt-status-cache 1\n\0end 0 0000000000000000\n";
		struct status_cache d = { 0 };
		cr_expect_eq(status_cache_parse(&d, with_nul, sizeof with_nul - 1), -1);
		status_cache_free(&d);
	}
	free(text);
	status_cache_free(&c);
}

/* Lines with a good checksum but values that must not pass: each ignored
 * (its session is captured), or the file refused. */
static char *
signed_text(const char *lines, size_t count)
{
	/* Signed the way the cache signs (FNV-1a 64 of all before "end"), as a
	 * hostile writer who read the source would. */
	char *body = fmt("hqt-status-cache 1\n%s", lines), *out;
	uint64_t sum = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)body; *p; p++) {
		sum ^= *p;
		sum *= 0x100000001b3ull;
	}
	out = fmt("%send %zu %016llx\n", body, count, (unsigned long long)sum);
	free(body);
	return out;
}

Test(cache, hostile_lines_with_a_good_checksum)
{
	static const char *const bad[] = {
		"5 0123456789abcdef %7 4242 80 24 1796170000 1796170002 4\n",   /* status 4 */
		"5 0123456789abcdef %7 4242 80 24 1796170000 1796170002 -1\n",  /* negative */
		"5 0123456789abcdef 7 4242 80 24 1796170000 1796170002 1\n",    /* no % */
		"5 0123456789abcdef %7x 4242 80 24 1796170000 1796170002 1\n",  /* not digits */
		"5 0123456789abcdef %7 0 80 24 1796170000 1796170002 1\n",      /* pid 0 */
		"5 0123456789abcdef %7 4242 80 24 1796170000 1796170002 1 x\n", /* a word more */
		"5 0123456789abcdef %7 4242 80 24 1796170000 1796170002\n",     /* one less */
		"5 0123456789abcdef %7  4242 80 24 1796170000 1796170002 1\n",  /* two spaces */
		"5 0123456789ABCDEF %7 4242 80 24 1796170000 1796170002 1\n",   /* hex case */
		"5 0123456789abcdef %7 4242 80 24 99999999999999999999 1796170002 1\n",
		"0 0123456789abcdef %7 4242 80 24 1796170000 1796170002 1\n",   /* id 0 */
		"5 0123456789abcdef %7 4242 80 24 1796170000 +1796170002 1\n",
		"5 0123456789abcdef %123456789012345678901234 4242 80 24 1 2 1\n",
	};

	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *t = signed_text(bad[i], 1);
		struct status_cache d = { 0 };

		cr_expect_eq(status_cache_parse(&d, t, strlen(t)), 0, "%s", t);
		cr_expect_eq(d.n, 0, "line %zu was taken: %s", i, bad[i]);
		status_cache_free(&d);
		free(t);
	}
	/* a good line beside a bad one: only the good one */
	{
		char *t = signed_text("5 0123456789abcdef %7 4242 80 24 1796170000 1796170002 2\n"
				      "6 0123456789abcdef %8 x 80 24 1796170000 1796170002 2\n", 2);
		struct status_cache d = { 0 };

		cr_expect_eq(status_cache_parse(&d, t, strlen(t)), 0);
		cr_expect_eq(d.n, 1);
		status_cache_free(&d);
		free(t);
	}
	/* one session twice: neither */
	{
		char *t = signed_text("5 0123456789abcdef %7 4242 80 24 1796170000 1796170002 2\n"
				      "5 0123456789abcdef %7 4242 80 24 1796170000 1796170002 1\n", 2);
		expect_refused(t, "one session twice");
		free(t);
	}
	/* a count that does not match the lines */
	{
		char *t = signed_text("5 0123456789abcdef %7 4242 80 24 1796170000 1796170002 2\n", 2);
		expect_refused(t, "count");
		free(t);
	}
}

/* ---- on disk ---- */

static char *root, *run;

static void
disk_setup(void)
{
	root = tmpdir_new();
	run = fmt("%s/run", root);
	cr_assert_eq(mkdir(run, 0700), 0);
	setenv("XDG_RUNTIME_DIR", run, 1);
}

static void
disk_teardown(void)
{
	rm_rf(root);
	free(root);
	free(run);
}

TestSuite(disk, .init = disk_setup, .fini = disk_teardown);

static void
save_one(void)
{
	struct status_cache c;
	struct tmux_pane p = pane("%7", 4242, 1796170000);
	struct tmux_seen s;

	status_cache_load(&c, "/db", "sock", "hqt");
	cr_assert_not_null(c.path);
	tmux_seen_of(&s, &p, 1796170002);
	status_cache_put(&c, 5, 7, &s, HQT_STATUS_WAITING);
	status_cache_save(&c);
	status_cache_free(&c);
}

static size_t
loaded(const char *db, const char *sock)
{
	struct status_cache c;
	size_t n;

	status_cache_load(&c, db, sock, "hqt");
	n = c.n;
	status_cache_free(&c);
	return n;
}

static char *
cache_file(void)
{
	struct status_cache c;
	char *path;

	status_cache_load(&c, "/db", "sock", "hqt");
	path = xstrdup(c.path);
	status_cache_free(&c);
	return path;
}

Test(disk, saved_private_and_read_back_by_its_own_place_only)
{
	struct stat st;
	char *path;

	save_one();
	path = cache_file();
	cr_assert_eq(lstat(path, &st), 0);
	cr_expect(S_ISREG(st.st_mode));
	cr_expect_eq(st.st_mode & 0777, 0600);
	cr_expect_eq(loaded("/db", "sock"), 1);
	/* another database or tmux server: another file */
	cr_expect_eq(loaded("/other-db", "sock"), 0);
	cr_expect_eq(loaded("/db", "other"), 0);
	free(path);
}

Test(disk, a_session_not_read_again_is_dropped)
{
	struct status_cache c;

	save_one();
	status_cache_load(&c, "/db", "sock", "hqt");
	cr_assert_eq(c.n, 1);
	status_cache_save(&c); /* nothing kept: rewritten without it */
	status_cache_free(&c);
	cr_expect_eq(loaded("/db", "sock"), 0);
}

Test(disk, not_ours_a_link_or_open_to_others_is_ignored)
{
	char *path, *elsewhere = fmt("%s/elsewhere", root), *text;
	struct status_cache c;

	save_one();
	path = cache_file();
	text = slurp(path);
	/* open to the group */
	cr_assert_eq(chmod(path, 0640), 0);
	cr_expect_eq(loaded("/db", "sock"), 0);
	cr_assert_eq(chmod(path, 0600), 0);
	cr_expect_eq(loaded("/db", "sock"), 1);
	/* a symlink to a good-looking file */
	write_file(elsewhere, text, 0600);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(symlink(elsewhere, path), 0);
	cr_expect_eq(loaded("/db", "sock"), 0);
	/* a directory, a FIFO */
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_expect_eq(loaded("/db", "sock"), 0);
	cr_assert_eq(rmdir(path), 0);
	cr_assert_eq(mkfifo(path, 0600), 0);
	cr_expect_eq(loaded("/db", "sock"), 0); /* and no hang on the FIFO */
	/* a save replaces what was there with a good file */
	status_cache_load(&c, "/db", "sock", "hqt");
	{
		struct tmux_pane p = pane("%7", 4242, 1796170000);
		struct tmux_seen s;

		tmux_seen_of(&s, &p, 1796170002);
		status_cache_put(&c, 5, 7, &s, HQT_STATUS_WAITING);
	}
	status_cache_save(&c);
	status_cache_free(&c);
	cr_expect_eq(loaded("/db", "sock"), 1);
	free(text);
	free(path);
	free(elsewhere);
}

Test(disk, too_big_is_ignored)
{
	char *path;
	int fd;

	save_one();
	path = cache_file();
	fd = open(path, O_WRONLY | O_APPEND);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, STATUS_CACHE_MAX_BYTES + 1), 0);
	close(fd);
	cr_expect_eq(loaded("/db", "sock"), 0);
	free(path);
}

Test(disk, a_runtime_directory_open_to_others_is_not_used)
{
	char *dir;

	cr_assert_eq(chmod(run, 0755), 0);
	/* make = false: the fallback (/run/user/UID, /tmp/hqt-UID) is looked
	 * at, never created by a test */
	dir = hqt_runtime_dir(false);
	cr_expect(dir == NULL || strncmp(dir, run, strlen(run)) != 0, "%s", dir);
	free(dir);
}

/* hqt show reads one session: the others' entries stay, for a day. */
Test(cache, a_read_of_some_sessions_keeps_the_others_for_a_day)
{
	struct status_cache c = one_entry(), d = { 0 };
	long long listed[] = { 5 };
	size_t len;
	char *text;

	/* as loaded: nothing kept yet */
	for (size_t i = 0; i < c.n; i++)
		c.v[i].kept = false;
	status_cache_keep_unlisted(&c, listed, 1, 1796170009 + 3600);
	text = status_cache_format(&c, &len);
	cr_assert_eq(status_cache_parse(&d, text, len), 0);
	cr_expect_eq(d.n, 1, "%s", text);
	cr_expect_not_null(status_cache_find(&d, 2, 0x1111111111111111ull), "not listed: kept");
	cr_expect_null(status_cache_find(&d, 5, 0x0123456789abcdefull), "listed, not read: gone");
	free(text);
	status_cache_free(&d);
	for (size_t i = 0; i < c.n; i++)
		c.v[i].kept = false;
	status_cache_keep_unlisted(&c, listed, 1, 1796170009 + STATUS_CACHE_UNLISTED_SECONDS + 1);
	text = status_cache_format(&c, &len);
	cr_assert_eq(status_cache_parse(&d, text, len), 0);
	cr_expect_eq(d.n, 0, "a day old: %s", text);
	free(text);
	status_cache_free(&d);
	status_cache_free(&c);
}
