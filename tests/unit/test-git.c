/* test-git.c: hqt's own git (git.c): the gitlinks read from real indexes
 * of every shape git writes (versions 2, 3 and 4, SHA-256, a split index
 * that is asked of git), as `git ls-files --stage` lists them; bytes that
 * are no index refused; and git_run obeys no GIT_* variable of ours. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "git.h"
#include "support.h"
#include "util.h"

static char *root;

static void
setup(void)
{
	char tmpl[] = "/tmp/hqt-test-git-XXXXXX";

	cr_assert_not_null(mkdtemp(tmpl));
	root = strdup(tmpl);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("HOME", root, 1);
}

static void
teardown(void)
{
	char *cmd = fmt("rm -rf '%s'", root);

	cr_expect_eq(system(cmd), 0);
	free(cmd);
	free(root);
}

TestSuite(git, .init = setup, .fini = teardown, .timeout = 60);

static void
sh(const char *script)
{
	char *cmd = fmt("cd '%s' && (%s) >/dev/null 2>&1", root, script);

	cr_assert_eq(system(cmd), 0, "%s", script);
	free(cmd);
}

/* A repository r (init options opts) with files, two gitlinks (one deep,
 * one with a long name) and an intent-to-add file (an extended entry). */
static void
repo(const char *opts)
{
	char *s = fmt("git init -q %s r && cd r && echo a > a && mkdir -p d/e && echo b > d/e/b && "
		      "h=$(git hash-object -w a) && "
		      "git update-index --add --cacheinfo 160000,$h,sub && "
		      "git update-index --add --cacheinfo 160000,$h,d/e/%0250d && "
		      "git add a d/e/b && echo n > d/new && git add -N d/new",
		      opts, 7);
	sh(s);
	free(s);
}

static char *
joined(const struct strv *v)
{
	char *out = strdup("");

	for (size_t i = 0; i < v->n; i++) {
		char *n = fmt("%s%s\n", out, v->v[i]);
		free(out);
		out = n;
	}
	return out;
}

/* What git itself says the gitlinks are. */
static char *
git_says(void)
{
	char *cmd = fmt("cd '%s/r' && git ls-files --stage | awk '$1 == \"160000\" { print $4 }'", root);
	FILE *p = popen(cmd, "r");
	char buf[8192];
	size_t n = fread(buf, 1, sizeof buf - 1, p);

	buf[n] = '\0';
	pclose(p);
	free(cmd);
	return strdup(buf);
}

static void
expect_same(const char *what)
{
	struct strv v = STRV_INIT;
	char *err = NULL, *dir = fmt("%s/r", root), *want = git_says(), *got;

	cr_assert_eq(git_gitlinks(dir, &v, &err), 0, "%s: %s", what, err);
	got = joined(&v);
	cr_expect_eq(v.n, 2, "%s: %zu gitlinks", what, v.n);
	cr_expect_str_eq(got, want, "%s", what);
	strv_clear(&v);
	free(got);
	free(want);
	free(dir);
}

Test(git, gitlinks_of_every_index_version)
{
	repo("");
	expect_same("v2/v3");
	sh("cd r && git update-index --index-version 4 && git update-index --index-version 4");
	expect_same("v4");
	sh("cd r && git update-index --index-version 2");
	expect_same("v2 again");
}

Test(git, gitlinks_of_a_sha256_repository)
{
	repo("--object-format=sha256");
	expect_same("sha256");
	sh("cd r && git update-index --index-version 4");
	expect_same("sha256 v4");
}

Test(git, a_split_index_is_asked_of_git)
{
	repo("");
	sh("cd r && git update-index --split-index");
	expect_same("split");
}

Test(git, a_worktree_index_through_its_git_file_and_none_without)
{
	struct strv v = STRV_INIT;
	char *dir;

	repo("");
	sh("cd r && git -c user.name=t -c user.email=t@t commit -qm one && git worktree add -q ../w");
	dir = fmt("%s/w", root);
	cr_assert_eq(git_gitlinks(dir, &v, NULL), 0);
	cr_expect_eq(v.n, 2, "the worktree's own index: %zu", v.n);
	strv_clear(&v);
	free(dir);
	dir = fmt("%s", root); /* no .git at all */
	cr_assert_eq(git_gitlinks(dir, &v, NULL), 0);
	cr_expect_eq(v.n, 0);
	free(dir);
}

Test(git, bytes_that_are_no_index_are_refused)
{
	struct strv v = STRV_INIT;
	char *path = fmt("%s/r/.git/index", root), *text;
	size_t len;

	repo("");
	text = read_file(path, 1 << 20, &len);
	cr_assert_not_null(text);
	cr_expect_eq(git_index_gitlinks((unsigned char *)text, len, &v), 0);
	cr_expect_eq(v.n, 2);
	strv_clear(&v);
	/* Every cut and every flipped length byte: refused or read, never past
	 * the end (ASan watches), and never a partial list. */
	for (size_t cut = 0; cut < len; cut++) {
		int rc = git_index_gitlinks((unsigned char *)text, cut, &v);
		cr_expect(rc < 0 && v.n == 0, "cut at %zu: %d, %zu", cut, rc, v.n);
		strv_clear(&v);
	}
	cr_expect_eq(git_index_gitlinks((unsigned char *)"DIRC\0\0\0\x09\0\0\0\0", 12, &v), 1,
		     "an unknown version is asked of git");
	cr_expect_eq(git_index_gitlinks((unsigned char *)"XXXX\0\0\0\x02\0\0\0\0", 12, &v), -1);
	free(text);
	free(path);
}

Test(git, git_run_obeys_no_git_variable_of_ours)
{
	struct spawn_result r;
	const char *args[] = { "rev-parse", "--show-toplevel", NULL };
	char *dir, *want;

	repo("");
	dir = fmt("%s/r/d", root);
	setenv("GIT_DIR", "/nonexistent", 1);
	setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch /nonexistent/x'", 1);
	cr_assert_eq(git_run(dir, args, &r, NULL), 0, "%s", r.err);
	want = fmt("%s/r\n", root);
	cr_expect_str_eq(r.out, want);
	spawn_result_free(&r);
	unsetenv("GIT_DIR");
	unsetenv("GIT_CONFIG_PARAMETERS");
	free(want);
	free(dir);
}

/* git_config_file_get against git's own reading of the same file: keys as
 * git writes them (tab-indented after others), quotes, escapes, comments,
 * continuations, subsections, the last value winning; a NUL byte or a
 * header left open end the reading, never hang it. */
Test(git, config_file_read_as_git_reads_it)
{
	static const char *const files[] = {
		"[core]\n\trepositoryformatversion = 0\n\tbare = false\n\thooksPath = .githooks\n",
		"[core]\n\thooksPath = first\n[core \"sub\"]\n\thooksPath = no\n[remote \"o\"]\n"
		"\thooksPath = no\n[Core] HooksPath = \"a b\"  # c\n",
		"[core]\n\thooksPath = x\\\n y ; comment\n",
		"[core]\n\thooksPath = \"q\\\"uote\\\\d\"\n",
		"[core]\n\thooksPath = one\n\thooksPath = two\n",
		"[core]\nhooksPath\n",
		"; only a comment\n",
	};
	char *path = fmt("%s/cfg", root);

	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char *cmd = fmt("git config --file '%s' --get core.hookspath", path);
		FILE *f;
		char line[256] = "", *got;
		int rc;

		write_file(path, files[i], 0644);
		f = popen(cmd, "r");
		cr_assert_not_null(f);
		if (fgets(line, sizeof line, f) == NULL)
			line[0] = '\0';
		rc = pclose(f);
		line[strcspn(line, "\n")] = '\0';
		got = git_config_file_get(path, "core", "hookspath");
		if (rc != 0)
			cr_expect(got == NULL || (line[0] == '\0' && got[0] == '\0'),
				  "file %zu: git says nothing, we say '%s'", i, got);
		else
			cr_expect(got != NULL && strcmp(got, line) == 0,
				  "file %zu: git says '%s', we say '%s'", i, line, got ? got : "(null)");
		free(got);
		free(cmd);
	}
	{
		static const char nul[] = "[core]\n\thooksPath = a\n\0\0[core]\n\thooksPath = b\n[core";
		FILE *f = fopen(path, "w");
		char *got;

		cr_assert_not_null(f);
		fwrite(nul, 1, sizeof nul - 1, f);
		fclose(f);
		got = git_config_file_get(path, "core", "hookspath");
		cr_expect(got != NULL && (strcmp(got, "a") == 0 || strcmp(got, "b") == 0), "%s", got);
		free(got);
	}
	free(path);
}
