/* test-cli.c: the command line as a user meets it, through the built hqt:
 * help for every command, exit codes and one-line errors, every --json
 * document parsing to the stable shapes of SPEC §6, doctor without bwrap,
 * and the project rules. */
#include <criterion/criterion.h>

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

static struct tenv te;

static void
setup(void)
{
	char *v;

	tenv_init(&te, NULL);
	v = fmt("PATH=%s:/usr/bin:/bin", getenv("HQT_FAKE_DIR"));
	tenv_set(&te, v);
	free(v);
	v = fmt("HQT_PLUGIN_DIR=%s", getenv("HQT_TEST_PLUGIN_DIR"));
	tenv_set(&te, v);
	free(v);
	v = fmt("FAKE_LOG_DIR=%s/log", te.root);
	tenv_set(&te, v);
	free(v);
	v = fmt("FAKE_CONTROL=%s/control", te.root);
	tenv_set(&te, v);
	free(v);
}

static void
teardown(void)
{
	tenv_free(&te);
}

TestSuite(cli, .init = setup, .fini = teardown, .timeout = 60);

/* ---- helpers ---- */

static int
count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		if (*s == '\n')
			n++;
	return n;
}

/* The error contract: exit `code`, nothing on stdout, one "hqt: ..." line. */
static void
assert_one_error(const struct run *r, int code, const char *what)
{
	cr_assert_eq(r->code, code, "%s: exit %d, want %d; stderr: %s", what, r->code, code,
		     r->err);
	cr_assert_str_empty(r->out, "%s: stdout should be empty: %s", what, r->out);
	cr_assert(strncmp(r->err, "hqt: ", 5) == 0, "%s: stderr not 'hqt: ...': %s", what,
		  r->err);
	cr_assert_eq(count_lines(r->err), 1, "%s: want one line on stderr: [%s]", what, r->err);
}

static bool
is_string_or_null(const json_t *v)
{
	return v != NULL && (json_is_string(v) || json_is_null(v));
}

/* The command names `hqt --help` lists (its "Commands:" block). */
static size_t
listed_commands(char names[][32], size_t max)
{
	struct run r;
	size_t n = 0;
	bool in = false;

	run_hqt(&r, &te, "--help", NULL);
	cr_assert_eq(r.code, 0);
	for (char *line = r.out, *nl; line != NULL && *line; line = nl ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		if (strcmp(line, "Commands:") == 0) {
			in = true;
			continue;
		}
		if (!in)
			continue;
		if (line[0] != ' ')
			break;
		if (n < max && sscanf(line, " %31s", names[n]) == 1)
			n++;
	}
	run_free(&r);
	return n;
}

static void
add_project(const char *name, const char *path)
{
	struct run r;

	run_hqt(&r, &te, "project", "add", name, path, NULL);
	cr_assert_eq(r.code, 0, "project add %s %s: %s", name, path, r.err);
	cr_assert_str_empty(r.err);
	run_free(&r);
}

static json_t *
project_list(void)
{
	struct run r;
	json_t *j;

	run_hqt(&r, &te, "project", "list", "--json", NULL);
	j = run_json(&r, "project list --json");
	run_free(&r);
	cr_assert(json_is_array(j));
	return j;
}

static json_t *
project_named(json_t *list, const char *name)
{
	size_t i;
	json_t *p;

	json_array_foreach(list, i, p) {
		const char *n = json_string_value(json_object_get(p, "name"));
		if (n != NULL && strcmp(n, name) == 0)
			return p;
	}
	return NULL;
}

/* ---- help, version, usage errors ---- */

Test(cli, help_lists_every_command)
{
	struct run r;
	static const char *const want[] = { "new", "list", "show", "attach", "resume", "kill",
					    "rm", "project", "plugins", "doctor" };

	run_hqt(&r, &te, "--help", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strncmp(r.out, "usage: hqt", 10) == 0, "%s", r.out);
	cr_assert_str_empty(r.err);
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		char *line = fmt("\n  %s ", want[i]);
		cr_assert_not_null(strstr(r.out, line), "--help does not list %s", want[i]);
		free(line);
	}
	/* The launcher is internal. */
	cr_assert_null(strstr(r.out, "exec-session"));
	run_free(&r);

	run_hqt(&r, &te, "-h", NULL);
	cr_assert_eq(r.code, 0);
	cr_assert(strncmp(r.out, "usage: hqt", 10) == 0);
	run_free(&r);
}

Test(cli, every_command_has_help)
{
	char names[32][32];
	size_t n = listed_commands(names, 32);

	cr_assert_geq(n, 10, "only %zu commands listed", n);
	for (size_t i = 0; i < n; i++) {
		struct run r;
		char *head = fmt("usage: hqt %s", names[i]);

		run_hqt(&r, &te, names[i], "--help", NULL);
		cr_assert_eq(r.code, 0, "hqt %s --help: exit %d: %s", names[i], r.code, r.err);
		cr_assert(strncmp(r.out, head, strlen(head)) == 0, "hqt %s --help: %s", names[i],
			  r.out);
		cr_assert_str_empty(r.err, "hqt %s --help: %s", names[i], r.err);
		run_free(&r);
		free(head);
	}
}

Test(cli, version)
{
	struct run r;

	run_hqt(&r, &te, "--version", NULL);
	cr_assert_eq(r.code, 0);
	cr_assert(strncmp(r.out, "hqt ", 4) == 0 && r.out[4] >= '0' && r.out[4] <= '9', "%s",
		  r.out);
	cr_assert_eq(count_lines(r.out), 1);
	cr_assert_str_empty(r.err);
	run_free(&r);

	run_hqt(&r, &te, "-V", NULL);
	cr_assert_eq(r.code, 0);
	cr_assert(strncmp(r.out, "hqt ", 4) == 0);
	run_free(&r);
}

Test(cli, unknown_command_or_option_is_usage_error)
{
	struct run r;

	run_hqt(&r, &te, "frobnicate", NULL);
	assert_one_error(&r, 2, "unknown command");
	cr_assert_not_null(strstr(r.err, "frobnicate"));
	run_free(&r);

	run_hqt(&r, &te, "--frobnicate", "list", NULL);
	assert_one_error(&r, 2, "unknown global option");
	run_free(&r);

	run_hqt(&r, &te, "--db", NULL);
	assert_one_error(&r, 2, "global option without its argument");
	run_free(&r);

	/* No command and no terminal: usage on stderr, exit 2. */
	run_hqt(&r, &te, NULL);
	cr_assert_eq(r.code, 2, "bare hqt without a terminal: %d", r.code);
	cr_assert_str_empty(r.out);
	run_free(&r);
}

Test(cli, unknown_option_of_every_command_is_usage_error)
{
	char names[32][32];
	size_t n = listed_commands(names, 32);

	for (size_t i = 0; i < n; i++) {
		struct run r;
		char *what = fmt("hqt %s --frobnicate", names[i]);

		run_hqt(&r, &te, names[i], "--frobnicate", NULL);
		assert_one_error(&r, 2, what);
		run_free(&r);
		free(what);
	}
}

Test(cli, bad_usage_of_commands)
{
	struct run r;
	static const char *const cases[][7] = {
		{ "new", NULL },
		{ "new", "p", NULL },
		{ "new", "p", "claude", "--fs", "rx", NULL },
		{ "new", "p", "claude", "--net", "maybe", NULL },
		{ "new", "p", "claude", "--no-sandbox", "--fs", "ro", NULL },
		{ "show", NULL },
		{ "show", "1", "2", NULL },
		{ "kill", NULL },
		{ "rm", NULL },
		{ "attach", NULL },
		{ "resume", NULL },
		{ "list", "extra", NULL },
		{ "project", NULL },
		{ "project", "add", "x", NULL },
		{ "project", "frob", NULL },
		{ "project", "list", "--yaml", NULL },
		{ "doctor", "extra", NULL },
		{ "peek", NULL },
		{ "peek", "1", "2", NULL },
		{ "peek", "1", "--lines", "0", NULL },
		{ "peek", "1", "--lines", "ten", NULL },
		{ "peek", "1", "--lines", NULL },
	};

	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *argv[9] = { hqt_bin() };
		size_t k = 1;
		for (size_t j = 0; j < 7 && cases[i][j] != NULL; j++)
			argv[k++] = cases[i][j];
		argv[k] = NULL;
		char *what = fmt("hqt %s %s %s", cases[i][0], k > 2 ? argv[2] : "",
				 k > 3 ? argv[3] : "");
		run_argv(&r, &te, argv, NULL);
		assert_one_error(&r, 2, what);
		run_free(&r);
		free(what);
	}
}

Test(cli, no_such_session_is_error_1)
{
	static const char *const verbs[] = { "show", "kill", "rm", "resume", "attach", "peek" };
	struct run r;

	for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++) {
		run_hqt(&r, &te, verbs[i], "42", NULL);
		assert_one_error(&r, 1, verbs[i]);
		run_free(&r);
	}
	run_hqt(&r, &te, "new", "nosuchproject", "claude", NULL);
	assert_one_error(&r, 1, "new in a missing project");
	run_free(&r);
}

/* ---- JSON documents ---- */

Test(cli, plugins_json)
{
	struct run r;
	json_t *j, *loaded, *refused, *p;
	size_t i;
	static const char *const want[] = { "claude", "codex", "kiro", "generic" };
	bool seen[4] = { false };

	run_hqt(&r, &te, "plugins", "--json", NULL);
	j = run_json(&r, "plugins --json");
	run_free(&r);
	loaded = json_object_get(j, "loaded");
	refused = json_object_get(j, "refused");
	cr_assert(json_is_array(loaded) && json_is_array(refused));
	json_array_foreach(loaded, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		json_t *flags = json_object_get(p, "skip_permission_flags");
		json_t *binds = json_object_get(p, "binds"), *b;
		size_t k;

		cr_assert_not_null(name);
		cr_assert(json_is_string(json_object_get(p, "display_name")), "%s", name);
		cr_assert(json_is_string(json_object_get(p, "file")), "%s", name);
		cr_assert(json_is_string(json_object_get(p, "abi")), "%s", name);
		cr_assert(json_is_array(flags), "%s", name);
		cr_assert(json_is_array(binds), "%s", name);
		json_array_foreach(binds, k, b) {
			cr_assert(json_is_string(json_object_get(b, "path")), "%s", name);
			cr_assert(json_is_boolean(json_object_get(b, "writable")), "%s", name);
		}
		for (size_t w = 0; w < 4; w++)
			if (strcmp(name, want[w]) == 0)
				seen[w] = true;
	}
	for (size_t w = 0; w < 4; w++)
		cr_assert(seen[w], "plugin %s not loaded", want[w]);
	cr_assert_eq(json_array_size(refused), 0);
	json_decref(j);
}

/* A plugin whose descriptor ends right after build_resume, with junk past
 * it (issue 11: doctor died of SIGSEGV reading its missing fields): listed,
 * and doctor runs to the end. */
Test(cli, short_descriptor_plugin_crashes_nothing)
{
	char *dir = fmt("%s/plugins", te.root), *so = fmt("%s/tests/plugins/short.so", build_dir());
	struct run r;
	char *bytes;
	size_t len;
	FILE *in, *out;

	mkdir(dir, 0755);
	in = fopen(so, "rb");
	cr_assert_not_null(in, "build the fixtures first: %s", so);
	out = fopen(fmt("%s/short.so", dir), "wb");
	cr_assert_not_null(out);
	bytes = malloc(1 << 20);
	while ((len = fread(bytes, 1, 1 << 20, in)) > 0)
		fwrite(bytes, 1, len, out);
	fclose(in);
	fclose(out);
	free(bytes);
	run_hqt(&r, &te, "--plugin-dir", dir, "plugins", NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "fixture_short") != NULL, "%s", r.out);
	run_free(&r);
	run_hqt(&r, &te, "--plugin-dir", dir, "doctor", NULL);
	cr_expect(r.code == 0 || r.code == 1, "doctor died: %d\n%s", r.code, r.err);
	cr_expect(strstr(r.out, "fixture_short") != NULL, "%s", r.out);
	run_free(&r);
	free(dir);
	free(so);
}

Test(cli, plugins_text)
{
	struct run r;

	run_hqt(&r, &te, "plugins", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_not_null(strstr(r.out, "claude"));
	cr_assert_not_null(strstr(r.out, "generic"));
	cr_assert_not_null(strstr(r.out, "loaded   generic   Generic harness     abi "), "%s", r.out);
	cr_assert_not_null(strstr(r.out, "\n           read-only in sandboxed projects: "
				     ".claude/ .mcp.json CLAUDE.local.md\n"), "%s", r.out);
	run_free(&r);
}

static void
assert_doctor_shape(json_t *j)
{
	json_t *checks = json_object_get(j, "checks"), *c;
	size_t i;

	cr_assert(json_is_boolean(json_object_get(j, "ok")));
	cr_assert(json_is_array(checks) && json_array_size(checks) > 0);
	json_array_foreach(checks, i, c) {
		cr_assert(json_is_string(json_object_get(c, "name")));
		cr_assert(json_is_boolean(json_object_get(c, "ok")));
		cr_assert(json_is_string(json_object_get(c, "detail")));
		cr_assert(is_string_or_null(json_object_get(c, "fix")));
		if (!json_is_true(json_object_get(c, "ok")))
			cr_assert(json_is_string(json_object_get(c, "fix")),
				  "failed check %s has no fix",
				  json_string_value(json_object_get(c, "name")));
	}
}

static json_t *
check_named(json_t *j, const char *name)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(j, "checks"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0)
			return c;
	return NULL;
}

Test(cli, doctor_json)
{
	struct run r;
	json_t *j, *c;

	run_hqt(&r, &te, "doctor", "--json", NULL);
	j = run_json(&r, "doctor --json");
	run_free(&r);
	assert_doctor_shape(j);
	cr_assert(json_is_true(json_object_get(j, "ok")));
	cr_assert_not_null(check_named(j, "tmux"));
	cr_assert_not_null(check_named(j, "database"));
	cr_assert_not_null(c = check_named(j, "bubblewrap"));
	/* The fake harnesses are on PATH. */
	cr_assert_not_null(c = check_named(j, "harness claude"));
	cr_assert(json_is_true(json_object_get(c, "ok")), "%s",
		  json_string_value(json_object_get(c, "detail")));
	cr_assert_null(check_named(j, "sandbox claude"), "a sandbox that would start is no news");
	json_decref(j);
	/* Doctor creates nothing: no database file appears. */
	char *dbf = fmt("%s/.local/share/hqt/hqt.db", te.home);
	struct stat st;
	cr_assert_neq(stat(dbf, &st), 0, "doctor created %s", dbf);
	free(dbf);
}

/* A sandboxed codex session would be refused (its CODEX_HOME is a system
 * directory, which cannot be made the session's own): doctor says so
 * before `hqt new` does. */
Test(cli, doctor_warns_of_a_sandbox_that_would_not_start)
{
	struct run r;
	json_t *j, *c;

	tenv_set(&te, "CODEX_HOME=/usr/share/hqt-test-codex");
	run_hqt(&r, &te, "doctor", "--json", NULL);
	j = run_json(&r, "doctor --json");
	run_free(&r);
	assert_doctor_shape(j);
	cr_assert(json_is_true(json_object_get(j, "ok")), "a warning, not a failure");
	if (!json_is_true(json_object_get(check_named(j, "bubblewrap"), "ok")))
		cr_skip_test("no usable bubblewrap here: doctor checks no sandbox plan");
	cr_assert_not_null(c = check_named(j, "sandbox codex"));
	cr_assert(json_is_false(json_object_get(c, "ok")));
	cr_assert_not_null(strstr(json_string_value(json_object_get(c, "detail")),
				  "cannot be made private"), "%s",
			   json_string_value(json_object_get(c, "detail")));
	cr_assert_null(check_named(j, "sandbox claude"));
	json_decref(j);
}

Test(cli, doctor_without_bwrap_still_ok)
{
	char *bin = fmt("%s/bin", te.root), *link = fmt("%s/tmux", bin), *path;
	struct run r;
	json_t *j, *c;

	mkdir(bin, 0755);
	cr_assert_eq(symlink("/usr/bin/tmux", link), 0);
	path = fmt("PATH=%s", bin);
	tenv_set(&te, path);

	run_hqt(&r, &te, "doctor", "--json", NULL);
	cr_assert_eq(r.code, 0, "doctor without bwrap: exit %d: %s", r.code, r.err);
	j = run_json(&r, "doctor --json");
	run_free(&r);
	assert_doctor_shape(j);
	cr_assert(json_is_true(json_object_get(j, "ok")));
	cr_assert_not_null(c = check_named(j, "bubblewrap"));
	cr_assert(json_is_false(json_object_get(c, "ok")));
	cr_assert_not_null(strstr(json_string_value(json_object_get(c, "detail")), "unavailable"),
			   "%s", json_string_value(json_object_get(c, "detail")));
	cr_assert(json_is_string(json_object_get(c, "fix")));
	cr_assert_gt(strlen(json_string_value(json_object_get(c, "fix"))), 0);
	json_decref(j);

	run_hqt(&r, &te, "doctor", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_not_null(strstr(r.out, "bubblewrap"));
	cr_assert_not_null(strstr(r.out, "fix:"));
	run_free(&r);
	free(bin);
	free(link);
	free(path);
}

Test(cli, list_json_empty_is_an_array)
{
	struct run r;
	json_t *j;

	run_hqt(&r, &te, "list", "--json", NULL);
	j = run_json(&r, "list --json");
	cr_assert(json_is_array(j) && json_array_size(j) == 0, "%s", r.out);
	json_decref(j);
	run_free(&r);

	j = project_list();
	cr_assert_eq(json_array_size(j), 0);
	json_decref(j);
}

/* ---- projects ---- */

Test(cli, project_add_list_rm)
{
	char *a = fmt("%s/a", te.root), *b = fmt("%s/b", te.root);
	char *messy = fmt("%s/./b/../a/", te.root);
	struct run r;
	json_t *l, *p;

	mkdir(a, 0755);
	mkdir(b, 0755);
	add_project("alpha", messy);
	/* A relative path is stored absolute. */
	cr_assert_eq(chdir(te.root), 0);
	add_project("beta", "b");

	l = project_list();
	cr_assert_eq(json_array_size(l), 2);
	cr_assert_not_null(p = project_named(l, "alpha"));
	cr_assert_str_eq(json_string_value(json_object_get(p, "path")), a);
	cr_assert_eq(json_integer_value(json_object_get(p, "sessions")), 0);
	cr_assert(json_is_integer(json_object_get(p, "sessions")));
	cr_assert_not_null(p = project_named(l, "beta"));
	cr_assert_str_eq(json_string_value(json_object_get(p, "path")), b);
	json_decref(l);

	run_hqt(&r, &te, "project", "list", NULL);
	cr_assert_eq(r.code, 0);
	cr_assert_not_null(strstr(r.out, "alpha"));
	cr_assert_not_null(strstr(r.out, a));
	run_free(&r);

	run_hqt(&r, &te, "project", "rm", "alpha", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	l = project_list();
	cr_assert_eq(json_array_size(l), 1);
	cr_assert_null(project_named(l, "alpha"));
	json_decref(l);

	run_hqt(&r, &te, "project", "rm", "alpha", NULL);
	assert_one_error(&r, 1, "rm of a missing project");
	run_free(&r);
	free(a);
	free(b);
	free(messy);
}

Test(cli, project_add_refusals)
{
	char *dir = fmt("%s/d", te.root), *file = fmt("%s/f", te.root);
	char *missing = fmt("%s/missing", te.root);
	struct run r;
	json_t *l;

	mkdir(dir, 0755);
	write_file(file, "x", 0644);
	add_project("d", dir);

	run_hqt(&r, &te, "project", "add", "m", missing, NULL);
	assert_one_error(&r, 1, "a missing path");
	run_free(&r);
	run_hqt(&r, &te, "project", "add", "f", file, NULL);
	assert_one_error(&r, 1, "a file, not a directory");
	run_free(&r);
	run_hqt(&r, &te, "project", "add", "d", te.root, NULL);
	assert_one_error(&r, 1, "a duplicate name");
	cr_assert_not_null(strstr(r.err, "already exists"), "%s", r.err);
	run_free(&r);
	run_hqt(&r, &te, "project", "add", "bad name;x", dir, NULL);
	cr_assert_neq(r.code, 0);
	cr_assert_eq(count_lines(r.err), 1, "%s", r.err);
	run_free(&r);

	l = project_list();
	cr_assert_eq(json_array_size(l), 1, "refused adds left rows behind");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(l, 0), "path")), dir);
	json_decref(l);
	free(dir);
	free(file);
	free(missing);
}

Test(cli, project_rm_refused_while_it_has_sessions)
{
	char *dir = fmt("%s/w", te.root);
	struct run r;
	json_t *l, *j, *s;

	mkdir(dir, 0755);
	add_project("w", dir);
	run_hqt(&r, &te, "new", "w", "claude", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "1\n");
	run_free(&r);
	cr_assert_eq(hqt_windows(&te), 1);

	l = project_list();
	cr_assert_eq(json_integer_value(json_object_get(project_named(l, "w"), "sessions")), 1);
	json_decref(l);

	/* Every session-bearing --json document parses too. */
	run_hqt(&r, &te, "list", "--json", NULL);
	j = run_json(&r, "list --json");
	run_free(&r);
	cr_assert_eq(json_array_size(j), 1);
	s = json_array_get(j, 0);
	cr_assert_eq(json_integer_value(json_object_get(s, "id")), 1);
	cr_assert_str_eq(json_string_value(json_object_get(s, "project")), "w");
	cr_assert_str_eq(json_string_value(json_object_get(s, "project_path")), dir);
	cr_assert_str_eq(json_string_value(json_object_get(s, "harness")), "claude");
	cr_assert_str_eq(json_string_value(json_object_get(s, "window")), "hqt-1");
	cr_assert(json_is_null(json_object_get(s, "nickname")));
	cr_assert(json_is_null(json_object_get(s, "model")));
	cr_assert(json_is_null(json_object_get(s, "sandbox")));
	cr_assert(json_is_string(json_object_get(s, "harness_session_id")));
	cr_assert(json_is_string(json_object_get(s, "status")));
	json_decref(j);
	run_hqt(&r, &te, "show", "1", "--json", NULL);
	j = run_json(&r, "show --json");
	run_free(&r);
	cr_assert(json_is_object(j));
	cr_assert(json_is_array(json_object_get(j, "argv")));
	json_decref(j);
	run_hqt(&r, &te, "list", NULL);
	cr_assert_eq(r.code, 0);
	cr_assert_not_null(strstr(r.out, "claude"));
	run_free(&r);

	run_hqt(&r, &te, "project", "rm", "w", NULL);
	assert_one_error(&r, 1, "rm of a project with sessions");
	cr_assert_not_null(strstr(r.err, "--force"), "%s", r.err);
	run_free(&r);
	l = project_list();
	cr_assert_not_null(project_named(l, "w"));
	json_decref(l);
	cr_assert_eq(hqt_windows(&te), 1, "a refused rm stopped the session");

	run_hqt(&r, &te, "project", "rm", "--force", "w", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	l = project_list();
	cr_assert_eq(json_array_size(l), 0);
	json_decref(l);
	cr_assert_eq(hqt_windows(&te), 0, "project rm --force left the window running");
	run_hqt(&r, &te, "list", "--json", NULL);
	j = run_json(&r, "list --json");
	cr_assert_eq(json_array_size(j), 0);
	json_decref(j);
	run_free(&r);
	free(dir);
}

/* ---- peek ---- */

struct peek_want {
	const char *text;
	char *last;
};

static int
peek_shows(void *arg)
{
	struct peek_want *w = arg;
	struct run r;

	run_hqt(&r, &te, "peek", "1", NULL);
	free(w->last);
	w->last = r.out;
	r.out = NULL;
	run_free(&r);
	return w->last != NULL && strstr(w->last, w->text) != NULL;
}

Test(cli, peek_prints_the_screen_without_attaching)
{
	char *dir = fmt("%s/p", te.root);
	struct peek_want w = { "for shortcuts", NULL };
	struct run r;
	json_t *j, *lines;

	mkdir(dir, 0755);
	add_project("p", dir);
	cr_assert_eq(run_new(&te, "p", "claude", "--nickname", "looker", NULL), 1);
	/* The fake claude's idle screen: its input box, then "? for shortcuts". */
	cr_assert(wait_for(peek_shows, &w, 8000), "peek never showed the screen: %s", w.last);
	cr_assert_not_null(strstr(w.last, "❯"), "%s", w.last);
	/* Trailing blank lines dropped: the last line printed has text. */
	size_t len = strlen(w.last);
	cr_assert(len >= 2 && w.last[len - 1] == '\n' && w.last[len - 2] != '\n', "[%s]", w.last);
	cr_assert_lt(count_lines(w.last), 40, "more lines than the pane: %s", w.last);
	const char *lastline = w.last + len - 1;
	while (lastline > w.last && lastline[-1] != '\n')
		lastline--;

	/* --lines 2 (by nickname): the last two of them. */
	run_hqt(&r, &te, "peek", "looker", "--lines", "2", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_eq(count_lines(r.out), 2, "[%s]", r.out);
	cr_assert(strlen(r.out) >= strlen(lastline) &&
		  strcmp(r.out + strlen(r.out) - strlen(lastline), lastline) == 0,
		  "[%s] does not end with [%s]", r.out, lastline);
	run_free(&r);

	/* --json: {"id", "lines"}, the same lines. */
	run_hqt(&r, &te, "peek", "-n", "3", "1", "--json", NULL);
	j = run_json(&r, "peek --json");
	run_free(&r);
	cr_assert_eq(json_integer_value(json_object_get(j, "id")), 1);
	lines = json_object_get(j, "lines");
	cr_assert(json_is_array(lines) && json_array_size(lines) == 3);
	char *want = strndup(lastline, strlen(lastline) - 1);
	cr_assert_str_eq(json_string_value(json_array_get(lines, 2)), want);
	free(want);
	json_decref(j);
	/* Peeking attached nothing and left the session as it was. */
	cr_assert_eq(hqt_windows(&te), 1);

	/* Its window gone: one line, exit 1. */
	run_tmux(&r, &te, "kill-window", "-t", "hqt:hqt-1", NULL);
	run_free(&r);
	run_hqt(&r, &te, "peek", "1", NULL);
	assert_one_error(&r, 1, "peek of a session without a window");
	cr_assert_not_null(strstr(r.err, "no window"), "%s", r.err);
	cr_assert_not_null(strstr(r.err, "hqt resume 1"), "%s", r.err);
	run_free(&r);
	free(w.last);
	free(dir);
}

/*
 * What a harness prints is shown without bidi controls and invisible format
 * characters (issue 20 item 7): "abc<U+202E>def" reads "abcdef", not
 * "abcfed".  Control: the pane holds them (tmux's capture, and peek --json,
 * which gives the lines as the pane has them).
 */
Test(cli, peek_shows_no_bidi_or_invisible_characters)
{
	char *dir = fmt("%s/p", te.root), *ctl = fmt("%s/control", te.root);
	/* U+202E, U+2066, U+200B, a tag character (U+E0041), U+FEFF */
	static const char printed[] = "abc\xe2\x80\xae" "def\xe2\x81\xa6" "ghi\xe2\x80\x8b"
				      "jkl\xf3\xa0\x81\x81" "mno\xef\xbb\xbf" "pqr";
	struct peek_want w = { "abcdefghijklmnopqr", NULL };
	struct run r;
	json_t *j, *lines;
	bool held = false;

	mkdir(dir, 0755);
	add_project("p", dir);
	cr_assert_eq(run_new(&te, "p", "claude", NULL), 1);
	char *line = fmt("print %s\n", printed);
	write_file(ctl, line, 0644);
	free(line);
	cr_assert(wait_for(peek_shows, &w, 8000), "peek never showed the line clean:\n%s", w.last);
	cr_expect_null(strstr(w.last, "\xe2\x80\xae"), "%s", w.last);
	cr_expect_null(strstr(w.last, "\xf3\xa0\x81"), "%s", w.last);
	cr_expect_null(strstr(w.last, "\xef\xbb\xbf"), "%s", w.last);
	/* control: the pane has them */
	run_hqt(&r, &te, "peek", "1", "--json", NULL);
	j = run_json(&r, "peek --json");
	run_free(&r);
	lines = json_object_get(j, "lines");
	for (size_t i = 0; i < json_array_size(lines); i++)
		if (strstr(json_string_value(json_array_get(lines, i)), printed) != NULL)
			held = true;
	cr_expect(held, "control: the pane does not hold what was printed");
	json_decref(j);
	free(w.last);
	free(ctl);
	free(dir);
}

/* ---- habits: new ., filters, suggestions, several at once, late options ---- */

/* hqt ARGS run from directory dir (through sh: run_argv has no cwd). */
static void
run_in(struct run *r, const char *dir, const char *args)
{
	char *cmd = fmt("cd '%s' && exec '%s' %s", dir, hqt_bin(), args);
	const char *argv[] = { "sh", "-c", cmd, NULL };

	run_argv(r, &te, argv, NULL);
	free(cmd);
}

Test(cli, new_dot_registers_the_current_directory)
{
	char *dir = fmt("%s/my app", te.root), *other = fmt("%s/x/my-app", te.root);
	struct run r;
	json_t *l, *p;

	mkdir(dir, 0755);
	run_in(&r, dir, "new . claude");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "1\n");
	/* One line on stderr naming the project it registered. */
	cr_assert_eq(count_lines(r.err), 1, "[%s]", r.err);
	cr_assert(strncmp(r.err, "hqt: registered project 'my-app' for ", 37) == 0, "%s", r.err);
	cr_assert_not_null(strstr(r.err, dir), "%s", r.err);
	run_free(&r);
	l = project_list();
	cr_assert_not_null(p = project_named(l, "my-app"));
	cr_assert_str_eq(json_string_value(json_object_get(p, "path")), dir);
	json_decref(l);

	/* Known now: the same project, nothing said. */
	run_in(&r, dir, "new . claude --dry-run");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_empty(r.err);
	run_free(&r);
	run_in(&r, dir, "new . claude");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "2\n");
	cr_assert_str_empty(r.err);
	run_free(&r);
	json_t *s = run_show(&te, "2");
	cr_assert_str_eq(json_string_value(json_object_get(s, "project")), "my-app");
	json_decref(s);

	/* Another directory of the same name gets a name of its own. */
	char *mk = fmt("mkdir -p '%s'", other);
	const char *argv[] = { "sh", "-c", mk, NULL };
	run_argv(&r, &te, argv, NULL);
	run_free(&r);
	free(mk);
	run_in(&r, other, "new . claude");
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_not_null(strstr(r.err, "'my-app-2'"), "%s", r.err);
	run_free(&r);
	/* --dry-run writes nothing: an unknown directory is not registered. */
	char *third = fmt("%s/x", te.root);
	run_in(&r, third, "new . claude --dry-run");
	assert_one_error(&r, 1, "new . --dry-run in an unknown directory");
	run_free(&r);
	l = project_list();
	cr_assert_eq(json_array_size(l), 2);
	json_decref(l);
	free(third);
	free(dir);
	free(other);
}

static size_t
listed(const char *a1, const char *a2, const char *a3, const char *a4, long *ids)
{
	struct run r;
	json_t *j, *s;
	size_t i, n;

	run_hqt(&r, &te, "list", "--json", a1, a2, a3, a4, NULL);
	j = run_json(&r, "list --json with filters");
	run_free(&r);
	n = json_array_size(j);
	json_array_foreach(j, i, s)
		ids[i] = (long)json_integer_value(json_object_get(s, "id"));
	json_decref(j);
	return n;
}

Test(cli, list_filters_by_project_and_status)
{
	char *web = fmt("%s/web", te.root), *api = fmt("%s/api", te.root);
	long ids[8];
	struct run r;

	mkdir(web, 0755);
	mkdir(api, 0755);
	add_project("web", web);
	add_project("api", api);
	run_new(&te, "web", "claude", NULL);
	run_new(&te, "api", "claude", NULL);
	run_new(&te, "api", "codex", NULL);
	run_ok(&te, "kill", "3", NULL);

	cr_assert_eq(listed("--project", "api", NULL, NULL, ids), 2);
	cr_assert(ids[0] == 2 && ids[1] == 3);
	cr_assert_eq(listed("--status", "gone", NULL, NULL, ids), 1);
	cr_assert_eq(ids[0], 3);
	cr_assert_eq(listed("-p", "api", "-s", "gone", ids), 1);
	cr_assert_eq(ids[0], 3);
	cr_assert_eq(listed("--project", "web", "--status", "gone", ids), 0);
	/* Text: the same rows, and a line when nothing matches. */
	run_hqt(&r, &te, "list", "--project", "web", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_eq(count_lines(r.out), 2, "%s", r.out);
	run_free(&r);
	run_hqt(&r, &te, "list", "--project", "web", "--status", "gone", NULL);
	cr_assert_str_eq(r.out, "no sessions match\n");
	run_free(&r);

	run_hqt(&r, &te, "list", "--status", "sleeping", NULL);
	assert_one_error(&r, 2, "list --status sleeping");
	cr_assert_not_null(strstr(r.err, "working, waiting, needs_input, exited or gone"), "%s",
			   r.err);
	run_free(&r);
	run_hqt(&r, &te, "list", "--project", "wbe", NULL);
	assert_one_error(&r, 1, "list --project wbe");
	cr_assert_not_null(strstr(r.err, "no project 'wbe'; did you mean 'web'? (known: api, web)"),
			   "%s", r.err);
	run_free(&r);
	free(web);
	free(api);
}

Test(cli, unknown_project_or_harness_suggests_the_closest)
{
	char *web = fmt("%s/web", te.root);
	struct run r;

	mkdir(web, 0755);
	add_project("web", web);
	run_hqt(&r, &te, "new", "wbe", "claude", NULL);
	assert_one_error(&r, 1, "new in a misspelt project");
	cr_assert_not_null(strstr(r.err, "no project 'wbe'; did you mean 'web'? (known: web)"), "%s",
			   r.err);
	run_free(&r);
	run_hqt(&r, &te, "new", "web", "cluade", NULL);
	assert_one_error(&r, 1, "new with a misspelt harness");
	cr_assert_not_null(strstr(r.err, "no harness 'cluade'; did you mean 'claude'? (loaded: "),
			   "%s", r.err);
	cr_assert_not_null(strstr(r.err, "codex"), "the known ones are listed: %s", r.err);
	run_free(&r);
	/* Far from everything: no guess, only the list. */
	run_hqt(&r, &te, "new", "web", "emacs-doctor", NULL);
	assert_one_error(&r, 1, "new with an unknown harness");
	cr_assert_null(strstr(r.err, "did you mean"), "%s", r.err);
	cr_assert_not_null(strstr(r.err, "(loaded: "), "%s", r.err);
	run_free(&r);
	cr_assert_eq(hqt_windows(&te), 0);
	free(web);
}

Test(cli, kill_and_rm_several_sessions)
{
	char *web = fmt("%s/web", te.root);
	struct run r;
	json_t *l;

	mkdir(web, 0755);
	add_project("web", web);
	run_new(&te, "web", "claude", NULL);
	run_new(&te, "web", "claude", "--nickname", "two", NULL);
	run_new(&te, "web", "claude", NULL);
	cr_assert_eq(hqt_windows(&te), 3);

	run_hqt(&r, &te, "kill", "1", "two", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "1 killed\n2 killed\n");
	cr_assert_str_empty(r.err);
	run_free(&r);
	cr_assert_eq(hqt_windows(&te), 1);

	/* One name that is not there: nothing done to the others. */
	run_hqt(&r, &te, "rm", "1", "2", "nosuch", NULL);
	cr_assert_eq(r.code, 1);
	cr_assert_str_empty(r.out);
	cr_assert_not_null(strstr(r.err, "nosuch"), "%s", r.err);
	cr_assert_not_null(strstr(r.err, "nothing removed"), "%s", r.err);
	run_free(&r);
	l = run_list(&te);
	cr_assert_eq(json_array_size(l), 3);
	json_decref(l);

	run_hqt(&r, &te, "rm", "1", "3", "1", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "1 removed\n3 removed\n");
	run_free(&r);
	l = run_list(&te);
	cr_assert_eq(json_array_size(l), 1);
	cr_assert_eq(json_integer_value(json_object_get(json_array_get(l, 0), "id")), 2);
	json_decref(l);
	cr_assert_eq(hqt_windows(&te), 0);
	/* One session: as before, silent. */
	run_hqt(&r, &te, "rm", "2", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert_str_empty(r.out);
	run_free(&r);
	free(web);
}

Test(cli, global_options_after_the_command)
{
	char *dir = fmt("%s/p", te.root), *db = fmt("%s/other.db", te.root);
	char *dbopt = fmt("--db=%s", db);
	struct run r;
	json_t *l;

	mkdir(dir, 0755);
	run_hqt(&r, &te, "project", "add", "p", dir, "--db", db, NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	/* In the other database, not the default one. */
	l = project_list();
	cr_assert_eq(json_array_size(l), 0);
	json_decref(l);
	run_hqt(&r, &te, "--db", db, "project", "list", "--json", NULL);
	l = run_json(&r, "project list in the other db");
	run_free(&r);
	cr_assert_eq(json_array_size(l), 1);
	json_decref(l);
	run_hqt(&r, &te, "project", "list", dbopt, "--json", NULL);
	l = run_json(&r, "project list --db=");
	run_free(&r);
	cr_assert_eq(json_array_size(l), 1);
	json_decref(l);
	run_hqt(&r, &te, "list", "--db", NULL);
	assert_one_error(&r, 2, "a late global option without its value");
	run_free(&r);
	free(dbopt);
	free(db);
	free(dir);
}

static int
pane_shows(void *arg)
{
	const char *const *want = arg;
	struct run r;
	int ok;

	run_tmux(&r, &te, "capture-pane", "-p", "-t", "cli", NULL);
	ok = r.out != NULL && strstr(r.out, want[0]) != NULL && strstr(r.out, want[1]) != NULL;
	run_free(&r);
	return ok;
}

Test(cli, new_attach_starts_and_attaches)
{
	char *dir = fmt("%s/p", te.root);
	const char *want[] = { "for shortcuts", "d: detach" };
	struct run r;

	mkdir(dir, 0755);
	add_project("p", dir);
	const char *argv[] = { "tmux", "-L", te.socket, "-f", "/dev/null", "new-session", "-d",
			       "-s", "cli", "-x", "100", "-y", "30", "env", "-u", "TMUX",
			       hqt_bin(), "new", "p", "claude", "--attach", NULL };
	run_argv(&r, &te, argv, NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	cr_assert(wait_for(pane_shows, want, 8000), "new --attach never showed the session");
	cr_assert_eq(hqt_windows(&te), 1);
	/* Without a terminal: started, its number printed, the attach refused. */
	run_hqt(&r, &te, "new", "p", "claude", "--attach", NULL);
	cr_assert_eq(r.code, 1);
	cr_assert_str_eq(r.out, "2\n");
	cr_assert_not_null(strstr(r.err, "not a terminal"), "%s", r.err);
	run_free(&r);
	run_hqt(&r, &te, "new", "p", "claude", "--attach", "--dry-run", NULL);
	assert_one_error(&r, 2, "--attach with --dry-run");
	run_free(&r);
	free(dir);
}
