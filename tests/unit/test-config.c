/* test-config.c: hqt.ini lookup, parsing, validation and precedence, checked
 * through what a user sees: the values in effect and the exact messages. */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "support.h"
#include "util.h"
#include "version.h"

/* Every variable config_load reads; saved before each test, restored after. */
static const char *const env_names[] = {
	"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "HQT_CONFIG", "HQT_DB", "HQT_PLUGIN_DIR",
};
static char *saved_env[ARRAY_SIZE(env_names)];
static const char *const *saved_system_files;
static char *saved_cwd;

static char *root;   /* realpath of the test's temporary directory */
static char *home;   /* root/home */
static char *sysfiles[3];

static void
setup(void)
{
	char *t = tmpdir_new();

	root = realpath(t, NULL);
	cr_assert_not_null(root);
	rm_rf(t);
	free(t);
	mkdir(root, 0700);
	home = fmt("%s/home", root);
	mkdir(home, 0700);

	for (size_t i = 0; i < ARRAY_SIZE(env_names); i++) {
		const char *v = getenv(env_names[i]);
		saved_env[i] = v != NULL ? strdup(v) : NULL;
		unsetenv(env_names[i]);
	}
	setenv("HOME", home, 1);
	saved_cwd = getcwd(NULL, 0);

	/* A machine's own /etc/hqt/hqt.ini must not change these tests. */
	saved_system_files = config_system_files;
	sysfiles[0] = fmt("%s/etc/hqt/hqt.ini", root);
	sysfiles[1] = fmt("%s/usr-local-etc/hqt/hqt.ini", root);
	sysfiles[2] = NULL;
	config_system_files = (const char *const *)sysfiles;
}

static void
teardown(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(env_names); i++) {
		if (saved_env[i] != NULL)
			setenv(env_names[i], saved_env[i], 1);
		else
			unsetenv(env_names[i]);
		free(saved_env[i]);
		saved_env[i] = NULL;
	}
	if (saved_cwd != NULL && chdir(saved_cwd) != 0)
		cr_log_warn("cannot go back to %s", saved_cwd);
	free(saved_cwd);
	config_system_files = saved_system_files;
	free(sysfiles[0]);
	free(sysfiles[1]);
	rm_rf(root);
	free(root);
	free(home);
}

TestSuite(config, .init = setup, .fini = teardown);

/* Parse text as the file root/conf/hqt.ini; returns config_parse_string's value. */
static int
parse(struct config *cfg, const char *text, struct strv *warnings, char **err)
{
	char *name = fmt("%s/conf/hqt.ini", root);
	int rc = config_parse_string(cfg, text, name, warnings, err);

	free(name);
	return rc;
}

/* Parse text that must be accepted without any warning. */
static void
parse_ok(struct config *cfg, const char *text)
{
	struct strv w = STRV_INIT;
	char *err = NULL;

	cr_assert_eq(parse(cfg, text, &w, &err), 0, "rejected: %s", err);
	cr_assert_eq(w.n, 0, "unexpected warning: %s", w.n ? w.v[0] : "");
	strv_clear(&w);
}

/* Parse text that must be refused with exactly `want` (after "FILE:"). */
static void
expect_error(const char *text, const char *want)
{
	struct config cfg, zero;
	struct strv w = STRV_INIT;
	char *err = NULL, *full = fmt("%s/conf/hqt.ini:%s", root, want);

	memset(&cfg, 0x5a, sizeof cfg); /* garbage in: must come back empty */
	memset(&zero, 0, sizeof zero);
	cr_assert_eq(parse(&cfg, text, &w, &err), -1, "accepted:\n%s", text);
	cr_assert_str_eq(err, full);
	cr_assert(memcmp(&cfg, &zero, sizeof cfg) == 0, "config not left empty");
	config_free(&cfg);
	strv_clear(&w);
	free(err);
	free(full);
}

/* Parse text that must be accepted with exactly one warning `want`. */
static void
expect_warning(const char *text, const char *want)
{
	struct config cfg;
	struct strv w = STRV_INIT;
	char *err = NULL, *full = fmt("%s/conf/hqt.ini:%s", root, want);

	cr_assert_eq(parse(&cfg, text, &w, &err), 0, "rejected: %s", err);
	cr_assert_eq(w.n, 1, "%zu warnings for:\n%s", w.n, text);
	cr_assert_str_eq(w.v[0], full);
	config_free(&cfg);
	strv_clear(&w);
	free(full);
}

static void
assert_strv(const struct strv *sv, const char *const *want)
{
	size_t n = 0;

	for (; want[n] != NULL; n++) {
		cr_assert_lt(n, sv->n, "missing item %zu '%s'", n, want[n]);
		cr_assert_str_eq(sv->v[n], want[n], "item %zu", n);
	}
	cr_assert_eq(sv->n, n, "%zu items, want %zu", sv->n, n);
}

static void
assert_defaults(const struct config *cfg)
{
	char *db = fmt("%s/.local/share/hqt/hqt.db", home);

	cr_expect_str_eq(cfg->tmux_socket, "");
	cr_expect_str_eq(cfg->tmux_session, "hqt");
	assert_strv(&cfg->plugins_load, (const char *[]){ "*", NULL });
	cr_expect(!cfg->sandbox.enabled);
	cr_expect(cfg->sandbox.fs_rw);
	/* net = allow:+ by default: the harness's own hosts through its proxy */
	cr_expect(!cfg->sandbox.net && cfg->sandbox.net_allow);
	assert_strv(&cfg->sandbox.net_list, (const char *[]){ "+", NULL });
	cr_expect_eq(cfg->sandbox.ro_binds.n, 0);
	cr_expect_eq(cfg->sandbox.rw_binds.n, 0);
	cr_expect_eq(cfg->sandbox.env.n, 0);
	cr_expect_eq(cfg->nsections, 0);
	cr_expect_str_eq(cfg->db_path, db);
	cr_assert_not_null(cfg->plugin_dir);
	cr_expect_eq(cfg->plugin_dir[0], '/', "%s", cfg->plugin_dir);
	free(db);
}

/* ---- defaults and the shipped file ---------------------------------------- */

Test(config, builtin_defaults)
{
	struct config cfg;

	config_defaults(&cfg);
	assert_defaults(&cfg);
	cr_expect_null(cfg.path);
	config_free(&cfg);
}

Test(config, default_plugin_dir_is_next_to_the_executable)
{
	struct config cfg;
	char exe[PATH_MAX], *want;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	/* <bindir>/HQT_PLUGIN_RELDIR, resolved when it exists. */
	want = fmt("%s/%s", exe, HQT_PLUGIN_RELDIR);
	char *real = realpath(want, NULL);
	config_defaults(&cfg);
	if (real != NULL)
		cr_expect_str_eq(cfg.plugin_dir, real);
	else
		cr_expect_str_eq(cfg.plugin_dir, want);
	config_free(&cfg);
	free(real);
	free(want);
}

Test(config, defaults_follow_xdg_data_home)
{
	struct config cfg;
	char *data = fmt("%s/data", root), *db = fmt("%s/data/hqt/hqt.db", root);

	setenv("XDG_DATA_HOME", data, 1);
	config_defaults(&cfg);
	cr_expect_str_eq(cfg.db_path, db);
	config_free(&cfg);
	free(data);
	free(db);
}

Test(config, no_file_anywhere_means_builtin_defaults)
{
	struct config cfg;
	struct strv w = STRV_INIT;
	char *err = NULL;

	cr_assert_eq(config_load(&cfg, NULL, &w, &err), 0, "%s", err);
	cr_expect_null(cfg.path);
	cr_expect_eq(w.n, 0);
	assert_defaults(&cfg);
	config_free(&cfg);
}

Test(config, shipped_file_parses_cleanly_and_changes_nothing)
{
	char *path = fmt("%s/conf/hqt.ini", source_dir()), *text = slurp(path);
	struct config cfg;

	cr_assert_not_null(text, "%s", path);
	parse_ok(&cfg, text);
	assert_defaults(&cfg);
	config_free(&cfg);
	free(text);
	free(path);
}

Test(config, shipped_file_examples_are_valid_when_uncommented)
{
	char *path = fmt("%s/conf/hqt.ini", source_dir()), *text = slurp(path);
	struct config cfg;
	const struct config_section *sec;
	char *out, *o;

	cr_assert_not_null(text, "%s", path);
	/* ";key = ..." and ";[section]" are examples; "; prose" stays a comment. */
	out = o = xmalloc(strlen(text) + 1);
	for (const char *p = text; *p; p++) {
		bool line_start = p == text || p[-1] == '\n';
		if (line_start && p[0] == ';' && (p[1] == '[' || (p[1] >= 'a' && p[1] <= 'z')))
			continue;
		*o++ = *p;
	}
	*o = '\0';
	parse_ok(&cfg, out);
	sec = config_section(&cfg, "aider");
	cr_assert_not_null(sec);
	cr_expect_str_eq(sec->plugin, "generic");
	cr_expect_str_eq(config_section_get(sec, "command"), "aider");
	cr_expect_str_eq(config_section_get(sec, "skip_permission_flags"), "--yes-always");
	cr_expect_str_eq(config_section_get(sec, "binds"), "~/.aider.conf.yml:ro, ~/.aider");
	cr_expect_str_eq(config_section_get(sec, "working_markers"), "");
	for (const char *const *n = (const char *const[]){ "claude", "codex", "kiro", NULL }; *n; n++) {
		sec = config_section(&cfg, *n);
		cr_assert_not_null(sec, "[harness.%s]", *n);
		cr_expect_not_null(config_section_get(sec, "working_markers"));
		cr_expect_not_null(config_section_get(sec, "waiting_markers"));
	}
	/* The examples show the defaults. */
	cr_expect(!cfg.sandbox.enabled && cfg.sandbox.fs_rw && !cfg.sandbox.net && cfg.sandbox.net_allow);
	cr_expect_str_eq(cfg.tmux_session, "hqt");
	config_free(&cfg);
	free(out);
	free(text);
	free(path);
}

/* ---- every key ------------------------------------------------------------- */

Test(config, every_key_is_read)
{
	struct config cfg;
	char *p;
	const struct config_section *sec;

	parse_ok(&cfg,
		 "[hqt]\n"
		 "plugin_dir = /opt/hqt/plugins\n"
		 "db = /var/lib/hqt/x.db\n"
		 "tmux_socket = hqt_test-1\n"
		 "tmux_session = Work_2\n"
		 "[plugins]\n"
		 "load = claude, generic\n"
		 "[sandbox]\n"
		 "enabled = true\n"
		 "fs = ro\n"
		 "net = false\n"
		 "ro_binds = /usr/share/dict, /srv/ref\n"
		 "rw_binds = /srv/cache\n"
		 "env = ANTHROPIC_MODEL, _X1\n"
		 "[harness.aider]\n"
		 "plugin = generic\n"
		 "command = aider --no-auto-commits\n"
		 "binds = ~/.aider.conf.yml, ~/.aider\n");
	cr_expect_str_eq(cfg.plugin_dir, "/opt/hqt/plugins");
	cr_expect_str_eq(cfg.db_path, "/var/lib/hqt/x.db");
	cr_expect_str_eq(cfg.tmux_socket, "hqt_test-1");
	cr_expect_str_eq(cfg.tmux_session, "Work_2");
	assert_strv(&cfg.plugins_load, (const char *[]){ "claude", "generic", NULL });
	cr_expect(cfg.sandbox.enabled);
	cr_expect(!cfg.sandbox.fs_rw);
	cr_expect(!cfg.sandbox.net);
	assert_strv(&cfg.sandbox.ro_binds, (const char *[]){ "/usr/share/dict", "/srv/ref", NULL });
	assert_strv(&cfg.sandbox.rw_binds, (const char *[]){ "/srv/cache", NULL });
	assert_strv(&cfg.sandbox.env, (const char *[]){ "ANTHROPIC_MODEL", "_X1", NULL });
	cr_assert_eq(cfg.nsections, 1);
	sec = config_section(&cfg, "aider");
	cr_assert_not_null(sec);
	cr_expect_str_eq(sec->name, "aider");
	cr_expect_str_eq(sec->plugin, "generic");
	/* "plugin" is kept apart from the plugin's own keys, which stay in order,
	 * unexpanded (the plugin expands ~ in its lists). */
	assert_strv(&sec->keys, (const char *[]){ "command", "binds", NULL });
	assert_strv(&sec->values,
		    (const char *[]){ "aider --no-auto-commits", "~/.aider.conf.yml, ~/.aider", NULL });
	p = fmt("%s/conf/hqt.ini:15", root);
	cr_expect_str_eq(sec->where, p);
	free(p);
	p = fmt("%s/conf/hqt.ini:18", root);
	cr_expect_str_eq(sec->lines.v[1], p);
	free(p);
	cr_expect_str_eq(config_section_get(sec, "plugin"), "generic");
	cr_expect_null(config_section_get(sec, "resume_command"));
	cr_expect_null(config_section(&cfg, "claude"));
	cr_expect_null(config_section_get(NULL, "command"));
	config_free(&cfg);
}

Test(config, booleans_in_every_accepted_spelling)
{
	static const struct { const char *text; bool value; } cases[] = {
		{ "true", true }, { "TRUE", true }, { "yes", true }, { "On", true }, { "1", true },
		{ "false", false }, { "False", false }, { "no", false }, { "OFF", false }, { "0", false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct config cfg;
		char *text = fmt("[sandbox]\nenabled = %s\nnet = %s\n", cases[i].text, cases[i].text);
		parse_ok(&cfg, text);
		cr_expect_eq(cfg.sandbox.enabled, cases[i].value, "enabled = %s", cases[i].text);
		cr_expect_eq(cfg.sandbox.net, cases[i].value, "net = %s", cases[i].text);
		config_free(&cfg);
		free(text);
	}
}

Test(config, fs_rw_and_ro)
{
	struct config cfg;

	parse_ok(&cfg, "[sandbox]\nfs = ro\n");
	cr_expect(!cfg.sandbox.fs_rw);
	config_free(&cfg);
	parse_ok(&cfg, "[sandbox]\nfs = rw\n");
	cr_expect(cfg.sandbox.fs_rw);
	config_free(&cfg);
}

Test(config, comma_lists_drop_blanks_and_empty_items)
{
	struct config cfg;

	parse_ok(&cfg,
		 "[plugins]\n"
		 "load =  codex ,, claude,\t,codex ,\n"
		 "[sandbox]\n"
		 "env = ,A , B,,\n"
		 "ro_binds = /a ,  , /b c ,\n"
		 "rw_binds =\n");
	/* A plugin named twice is loaded once. */
	assert_strv(&cfg.plugins_load, (const char *[]){ "codex", "claude", NULL });
	assert_strv(&cfg.sandbox.env, (const char *[]){ "A", "B", NULL });
	assert_strv(&cfg.sandbox.ro_binds, (const char *[]){ "/a", "/b c", NULL });
	cr_expect_eq(cfg.sandbox.rw_binds.n, 0);
	config_free(&cfg);
}

Test(config, load_star_and_empty_load)
{
	struct config cfg;

	parse_ok(&cfg, "[plugins]\nload = *\n");
	assert_strv(&cfg.plugins_load, (const char *[]){ "*", NULL });
	config_free(&cfg);
	parse_ok(&cfg, "[plugins]\nload =\n");
	cr_expect_eq(cfg.plugins_load.n, 0);
	config_free(&cfg);
}

Test(config, tilde_is_the_home_directory_in_every_path)
{
	struct config cfg;
	char *want[4];

	parse_ok(&cfg,
		 "[hqt]\nplugin_dir = ~/plugins\ndb = ~/db/hqt.db\n"
		 "[sandbox]\nro_binds = ~, ~/ro\nrw_binds = ~/rw\n");
	want[0] = fmt("%s/plugins", home);
	want[1] = fmt("%s/db/hqt.db", home);
	want[2] = fmt("%s/ro", home);
	want[3] = fmt("%s/rw", home);
	cr_expect_str_eq(cfg.plugin_dir, want[0]);
	cr_expect_str_eq(cfg.db_path, want[1]);
	assert_strv(&cfg.sandbox.ro_binds, (const char *[]){ home, want[2], NULL });
	assert_strv(&cfg.sandbox.rw_binds, (const char *[]){ want[3], NULL });
	for (int i = 0; i < 4; i++)
		free(want[i]);
	config_free(&cfg);
}

Test(config, relative_paths_are_relative_to_the_files_directory)
{
	struct config cfg;
	char *dir = fmt("%s/conf", root), *a = fmt("%s/plugins", dir),
	     *b = fmt("%s/../data/hqt.db", dir), *c = fmt("%s/share", dir);

	/* The cwd must not matter. */
	cr_assert_eq(chdir("/"), 0);
	parse_ok(&cfg, "[hqt]\nplugin_dir = plugins\ndb = ../data/hqt.db\n"
		       "[sandbox]\nro_binds = share\n");
	cr_expect_str_eq(cfg.plugin_dir, a);
	cr_expect_str_eq(cfg.db_path, b);
	assert_strv(&cfg.sandbox.ro_binds, (const char *[]){ c, NULL });
	config_free(&cfg);
	free(dir);
	free(a);
	free(b);
	free(c);
}

Test(config, empty_path_means_the_default)
{
	struct config cfg;
	char *db = fmt("%s/.local/share/hqt/hqt.db", home);

	parse_ok(&cfg, "[hqt]\nplugin_dir =\ndb =\ntmux_socket =\n");
	cr_expect_str_eq(cfg.db_path, db);
	cr_expect_eq(cfg.plugin_dir[0], '/');
	cr_expect_str_eq(cfg.tmux_socket, "");
	config_free(&cfg);
	free(db);
}

Test(config, inline_comments_crlf_and_colons)
{
	struct config cfg;

	parse_ok(&cfg, "; comment\r\n# comment\r\n[sandbox]\r\nfs = ro ; read-only\r\n"
		       "net: false\r\n");
	cr_expect(!cfg.sandbox.fs_rw);
	cr_expect(!cfg.sandbox.net);
	config_free(&cfg);
	/* ';' not after a blank is part of the value (and here not a name). */
	expect_error("[sandbox]\nenv = A;B\n",
		     "2: bad value 'A;B' for sandbox.env (accepted: variable names of A-Z, a-z, "
		     "0-9 and '_', not starting with a digit, at most 255 long)");
}

Test(config, indentation_is_ignored)
{
	struct config cfg;
	const struct config_section *sec;

	/* git-config style: every key indented, headers too.  No line continues
	 * the key above it, so nothing is glued to a neighbour silently. */
	parse_ok(&cfg,
		 "  [sandbox]\n"
		 "\tenabled = true\n"
		 "\tfs = ro\n"
		 "[harness.a]\n"
		 "    command = aider\n"
		 "    binds = ~/x\n");
	cr_expect(cfg.sandbox.enabled);
	cr_expect(!cfg.sandbox.fs_rw);
	sec = config_section(&cfg, "a");
	cr_assert_not_null(sec);
	cr_expect_str_eq(config_section_get(sec, "command"), "aider");
	cr_expect_str_eq(config_section_get(sec, "binds"), "~/x");
	config_free(&cfg);
	/* An indented line without '=' is then a syntax error, like any other. */
	expect_error("[sandbox]\nro_binds = /a,\n    /b\n",
		     "3: syntax error: expected 'key = value'");
}

/* ---- harness sections ------------------------------------------------------ */

Test(config, harness_sections_keep_order_and_merge_when_reopened)
{
	struct config cfg;
	const struct config_section *a, *b;

	parse_ok(&cfg,
		 "[harness.a]\nk1 = 1\n"
		 "[harness.b]\nplugin = generic\nk = x\n"
		 "[harness.a]\nk2 = 2\n");
	cr_assert_eq(cfg.nsections, 2);
	cr_expect_str_eq(cfg.sections[0].name, "a");
	cr_expect_str_eq(cfg.sections[1].name, "b");
	a = config_section(&cfg, "a");
	b = config_section(&cfg, "b");
	cr_expect_null(a->plugin);
	assert_strv(&a->keys, (const char *[]){ "k1", "k2", NULL });
	assert_strv(&a->values, (const char *[]){ "1", "2", NULL });
	cr_expect_str_eq(b->plugin, "generic");
	config_free(&cfg);
}

Test(config, harness_keys_are_not_checked_here)
{
	struct config cfg;

	/* The plugin host checks them against the plugin's own list. */
	parse_ok(&cfg, "[harness.claude]\nworking_markers = a, b\nanything = at all\n");
	cr_expect_str_eq(config_section_get(config_section(&cfg, "claude"), "anything"), "at all");
	config_free(&cfg);
}

Test(config, bad_harness_section_names)
{
	static const char *const bad[] = { "Aider", "", "a.b", "a b", "ä" };

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *text = fmt("[hqt]\n\n[harness.%s]\ncommand = x\n", bad[i]);
		char *want = fmt("3: bad section name [harness.%s] (harness names: a-z, 0-9, "
				 "'_' and '-')", bad[i]);
		expect_error(text, want);
		free(text);
		free(want);
	}
	expect_error("[harness.a]\ncommand = x\nbad key = 1\n",
		     "3: bad key name 'bad key' in [harness.a] (accepted: letters, digits, '_', '-' "
		     "and '.')");
	expect_error("[harness.a]\nplugin = Generic\n",
		     "2: bad value 'Generic' for harness.a.plugin (accepted: a plugin name of "
		     "a-z, 0-9, '_' and '-')");
}

/* ---- errors ------------------------------------------------------------------ */

Test(config, syntax_errors_name_file_and_line)
{
	expect_error("[hqt]\ntmux_session = a\nthis is not a key\n",
		     "3: syntax error: expected 'key = value'");
	expect_error("; c\n[sandbox\nfs = ro\n",
		     "2: syntax error: missing ']' in the section header");
	expect_error("[hqt]\n= value\n", "2: syntax error: empty key");
	/* inih would drop the key silently. */
	expect_error("[hqt]\n[sandbox] fs = ro\n", "2: syntax error: text after the section header");
}

Test(config, a_comment_may_follow_a_section_header)
{
	struct config cfg;

	parse_ok(&cfg, "[sandbox] ; the sandbox\nfs = ro\n[hqt];x\n");
	cr_expect(!cfg.sandbox.fs_rw);
	config_free(&cfg);
}

Test(config, line_numbers_survive_a_bom_and_long_lines)
{
	char *text, *pad = xmalloc(5000);

	expect_error("\xEF\xBB\xBF[sandbox]\nfs = x\n", "2: bad value 'x' for sandbox.fs (accepted: rw, ro)");
	/* A line longer than inih's default 200 bytes counts as one line. */
	memset(pad, 'a', 4999);
	pad[4999] = '\0';
	text = fmt("[harness.a]\nk = %s\nk2 = %s\nbroken\n", pad, pad);
	expect_error(text, "4: syntax error: expected 'key = value'");
	free(text);
	free(pad);
}

Test(config, line_too_long)
{
	size_t n = 70000;
	char *text = xmalloc(n + 64);

	strcpy(text, "[harness.a]\nk = ");
	memset(text + strlen(text), 'v', n);
	strcpy(text + 16 + n, "\n");
	expect_error(text, "2: line too long (at most 65534 bytes)");
	free(text);
}

Test(config, bad_values_name_the_key_and_what_is_accepted)
{
	expect_error("[sandbox]\nfs = rx\n", "2: bad value 'rx' for sandbox.fs (accepted: rw, ro)");
	expect_error("[sandbox]\nenabled = maybe\n",
		     "2: bad value 'maybe' for sandbox.enabled (accepted: true, false, yes, no, on, "
		     "off, 1, 0)");
	expect_error("[sandbox]\nnet =\n",
		     "2: bad value '' for sandbox.net (accepted: " CONFIG_NET_FORMS ")");
	expect_error("[sandbox]\nnet = allow:127.0.0.1\n",
		     "2: bad value 'allow:127.0.0.1' for sandbox.net (accepted: '127.0.0.1' is no "
		     "allow entry (accepted: " CONFIG_NET_FORMS "))");
	{
		/* One byte over env_name_valid's bound (util.h), as everywhere. */
		char *text = fmt("[sandbox]\nenv = %0256d\n", 0), *want;

		memset(text + strlen("[sandbox]\nenv = "), 'N', 256);
		want = fmt("2: bad value '%.80s...' for sandbox.env (accepted: variable names of "
			   "A-Z, a-z, 0-9 and '_', not starting with a digit, at most 255 long)",
			   text + strlen("[sandbox]\nenv = "));
		expect_error(text, want);
		free(want);
		free(text);
	}
	expect_error("[sandbox]\nenv = PATH, 9LIVES\n",
		     "2: bad value '9LIVES' for sandbox.env (accepted: variable names of A-Z, a-z, "
		     "0-9 and '_', not starting with a digit, at most 255 long)");
	expect_error("[sandbox]\nrw_binds = /ok, ~bob/x\n",
		     "2: bad value '~bob/x' for sandbox.rw_binds (accepted: absolute paths, ~/... or "
		     "paths relative to the file's directory)");
	expect_error("[hqt]\ndb = ~bob/x\n",
		     "2: bad value '~bob/x' for hqt.db (accepted: an absolute path, ~/... or a path "
		     "relative to the file's directory)");
	expect_error("[plugins]\nload = claude, *\n",
		     "2: bad value '*' for plugins.load (accepted: * alone, or plugin names of a-z, "
		     "0-9, '_' and '-')");
	expect_error("[plugins]\nload = Claude\n",
		     "2: bad value 'Claude' for plugins.load (accepted: * alone, or plugin names of "
		     "a-z, 0-9, '_' and '-')");
}

Test(config, bad_tmux_names)
{
	static const char *const bad[] = {
		"a:b", "a.b", "a b", "-a", "a/b", "..", "$1", "a\tb",
		"a1234567890123456789012345678901234567890123456789012345678901234", /* 65 */
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *text = fmt("[hqt]\ntmux_session = %s\n", bad[i]);
		char *want = fmt("2: bad value '%s' for hqt.tmux_session (accepted: letters, "
				 "digits, '_' and '-', not starting with '-', at most 64 characters)",
				 strcmp(bad[i], "a\tb") == 0 ? "a?b" : bad[i]);
		expect_error(text, want);
		free(text);
		free(want);
		text = fmt("[hqt]\ntmux_socket = %s\n", bad[i]);
		want = fmt("2: bad value '%s' for hqt.tmux_socket (accepted: empty, or letters, "
			   "digits, '_' and '-', not starting with '-', at most 64 characters)",
			   strcmp(bad[i], "a\tb") == 0 ? "a?b" : bad[i]);
		expect_error(text, want);
		free(text);
		free(want);
	}
	expect_error("[hqt]\ntmux_session =\n",
		     "2: bad value '' for hqt.tmux_session (accepted: letters, digits, '_' and '-', "
		     "not starting with '-', at most 64 characters)");
}

Test(config, the_first_error_in_the_file_is_reported)
{
	expect_error("[sandbox]\nfs = x\n\n\nbroken\n",
		     "2: bad value 'x' for sandbox.fs (accepted: rw, ro)");
	expect_error("[sandbox]\nbroken\n\n\nfs = x\n", "2: syntax error: expected 'key = value'");
}

Test(config, long_section_names_are_refused_not_cut)
{
	char name[64];

	memset(name, 'a', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	char *text = fmt("[hqt]\n[harness.%s]\nk = v\n", name);
	expect_error(text, "2: section name too long (at most 48 characters)");
	free(text);
}

Test(config, limits_are_errors)
{
	char *text;
	size_t cap = 200000, off;

	/* 1025 list items */
	text = xmalloc(cap);
	off = (size_t)snprintf(text, cap, "[sandbox]\nenv = ");
	for (int i = 0; i <= 1024; i++)
		off += (size_t)snprintf(text + off, cap - off, "V%d,", i);
	snprintf(text + off, cap - off, "\n");
	expect_error(text, "2: too many items for sandbox.env (at most 1024)");
	free(text);

	/* 1025 harness sections */
	text = xmalloc(cap);
	off = 0;
	for (int i = 0; i <= 1024; i++)
		off += (size_t)snprintf(text + off, cap - off, "[harness.h%d]\nk = v\n", i);
	expect_error(text, "2049: too many [harness.*] sections (at most 1024)");
	free(text);
}

Test(config, a_file_over_one_mib_is_refused)
{
	size_t n = 1u << 20;
	char *text = xmalloc(n + 1), *path = fmt("%s/big.ini", root), *err = NULL, *want;
	struct config cfg;

	memset(text, ';', n);
	text[n] = '\0';
	write_file(path, text, 0644);
	cr_assert_eq(config_load(&cfg, &(struct config_overrides){ .config = path }, NULL, &err), -1);
	want = fmt("%s: too large (more than 1048575 bytes)", path);
	cr_expect_str_eq(err, want);
	cr_assert_eq(parse(&cfg, text, NULL, &err), -1);
	free(want);
	free(err);
	free(text);
	free(path);
}

Test(config, nul_byte_in_a_file)
{
	char *path = fmt("%s/nul.ini", root), *err = NULL, *want;
	struct config cfg;
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fwrite("[hqt]\ndb = /a\0b\n", 1, 16, f);
	fclose(f);
	cr_assert_eq(config_load(&cfg, &(struct config_overrides){ .config = path }, NULL, &err), -1);
	want = fmt("%s:2: syntax error: NUL byte", path);
	cr_expect_str_eq(err, want);
	free(want);
	free(err);
	free(path);
}

/* ---- warnings ---------------------------------------------------------------- */

Test(config, unknown_keys_and_sections_warn_with_file_and_line)
{
	expect_warning("[hqt]\ntmux_session = x\nsocket = y\n", "3: unknown key 'socket' in [hqt]");
	expect_warning("[sandbox]\n\nfs = ro\nnetwork = off\n",
		       "4: unknown key 'network' in [sandbox]");
	/* One warning per section, at its header, not one per key. */
	expect_warning("[hqt]\ndb = /x\n\n[plugin]\nload = *\nother = 1\n", "4: unknown section [plugin]");
	expect_warning("db = /x\n[hqt]\n", "1: key 'db' outside of any section");
}

Test(config, duplicate_keys_warn_and_the_last_wins)
{
	struct config cfg;
	struct strv w = STRV_INIT;
	char *err = NULL, *want;

	cr_assert_eq(parse(&cfg,
			   "[sandbox]\nfs = ro\n[hqt]\n[sandbox]\nfs = rw\n"
			   "[harness.a]\ncommand = one\ncommand = two\n", &w, &err), 0, "%s", err);
	cr_expect(cfg.sandbox.fs_rw);
	cr_expect_str_eq(config_section_get(config_section(&cfg, "a"), "command"), "two");
	cr_assert_eq(w.n, 2);
	want = fmt("%s/conf/hqt.ini:5: duplicate key 'fs' in [sandbox] (also on line 2; the last "
		   "one wins)", root);
	cr_expect_str_eq(w.v[0], want);
	free(want);
	want = fmt("%s/conf/hqt.ini:8: duplicate key 'command' in [harness.a] (also on line 7; "
		   "the last one wins)", root);
	cr_expect_str_eq(w.v[1], want);
	free(want);
	config_free(&cfg);
	strv_clear(&w);
}

Test(config, warnings_are_capped)
{
	struct config cfg;
	struct strv w = STRV_INIT;
	char *err = NULL, *text = xmalloc(100000), *want;
	size_t off = (size_t)snprintf(text, 100000, "[hqt]\n");

	for (int i = 0; i < 200; i++)
		off += (size_t)snprintf(text + off, 100000 - off, "k%d = 1\n", i);
	cr_assert_eq(parse(&cfg, text, &w, &err), 0);
	cr_assert_eq(w.n, 51);
	want = fmt("%s/conf/hqt.ini: more warnings not shown", root);
	cr_expect_str_eq(w.v[50], want);
	free(want);
	config_free(&cfg);
	strv_clear(&w);
	free(text);
}

Test(config, null_warnings_and_err_are_allowed)
{
	struct config cfg;

	cr_expect_eq(parse(&cfg, "[hqt]\nunknown = 1\n", NULL, NULL), 0);
	config_free(&cfg);
	cr_expect_eq(parse(&cfg, "[hqt\n", NULL, NULL), -1);
	config_free(&cfg);
}

/* ---- lookup order ------------------------------------------------------------- */

/* Write a config file (path is consumed) that names itself through
 * tmux_session; returns its real path. */
static char *
put(char *path, const char *session)
{
	char *text = fmt("[hqt]\ntmux_session = %s\n", session), *real;

	write_file(path, text, 0644);
	real = realpath(path, NULL);
	free(text);
	free(path);
	return real;
}

static void
expect_file(const struct config_overrides *ov, const char *session, const char *path)
{
	struct config cfg;
	struct strv w = STRV_INIT;
	char *err = NULL;

	cr_assert_eq(config_load(&cfg, ov, &w, &err), 0, "%s", err);
	cr_expect_str_eq(cfg.tmux_session, session);
	cr_expect_str_eq(cfg.path, path);
	cr_expect_eq(w.n, 0);
	config_free(&cfg);
	strv_clear(&w);
}

Test(config, lookup_order)
{
	char *xdg = fmt("%s/xdg", root);
	char *f_cli = put(fmt("%s/cli.ini", root), "cli");
	char *f_env = put(fmt("%s/env.ini", root), "env");
	char *f_xdg, *f_home, *f_etc, *f_sys;
	struct config_overrides ov = { .config = f_cli };

	f_xdg = put(fmt("%s/hqt/hqt.ini", xdg), "xdg");
	f_home = put(fmt("%s/.config/hqt/hqt.ini", home), "home");
	f_sys = put(xstrdup(sysfiles[1]), "sys");
	f_etc = put(xstrdup(sysfiles[0]), "etc");

	setenv("XDG_CONFIG_HOME", xdg, 1);
	setenv("HQT_CONFIG", f_env, 1);
	expect_file(&ov, "cli", f_cli);
	expect_file(NULL, "env", f_env);
	setenv("HQT_CONFIG", "", 1); /* empty counts as unset */
	expect_file(NULL, "xdg", f_xdg);
	unsetenv("XDG_CONFIG_HOME");
	expect_file(NULL, "home", f_home);
	unlink(f_home);
	expect_file(NULL, "etc", f_etc);
	unlink(f_etc);
	expect_file(NULL, "sys", f_sys);
	free(xdg);
	free(f_cli);
	free(f_env);
	free(f_xdg);
	free(f_home);
	free(f_etc);
	free(f_sys);
}

Test(config, named_files_must_exist)
{
	struct config cfg, zero;
	char *err = NULL, *path = fmt("%s/missing.ini", root), *want;

	memset(&zero, 0, sizeof zero);
	/* Even with a user file present: a named file is never skipped. */
	free(put(fmt("%s/.config/hqt/hqt.ini", home), "home"));

	cr_assert_eq(config_load(&cfg, &(struct config_overrides){ .config = path }, NULL, &err), -1);
	want = fmt("cannot open '%s' (--config): No such file or directory", path);
	cr_expect_str_eq(err, want);
	cr_expect(memcmp(&cfg, &zero, sizeof cfg) == 0);
	config_free(&cfg);
	free(want);

	setenv("HQT_CONFIG", path, 1);
	cr_assert_eq(config_load(&cfg, NULL, NULL, &err), -1);
	want = fmt("cannot open '%s' ($HQT_CONFIG): No such file or directory", path);
	cr_expect_str_eq(err, want);
	free(want);

	cr_assert_eq(config_load(&cfg, &(struct config_overrides){ .config = "" }, NULL, &err), -1);
	cr_expect_str_eq(err, "--config: empty file name");
	free(err);
	free(path);
}

Test(config, an_unreadable_user_file_is_an_error_not_skipped)
{
	struct config cfg;
	char *dir = fmt("%s/.config/hqt/hqt.ini", home), *err = NULL, *want;

	/* A directory where the file should be: it exists, so it is the file. */
	cr_assert_eq(mkdir_p(dir, 0755), 0);
	free(put(xstrdup(sysfiles[0]), "etc"));
	cr_assert_eq(config_load(&cfg, NULL, NULL, &err), -1);
	want = fmt("cannot open '%s': Is a directory", dir);
	cr_expect_str_eq(err, want);
	free(want);
	free(err);
	free(dir);
}

Test(config, load_reports_errors_with_the_files_real_name)
{
	struct config cfg;
	struct strv w = STRV_INIT;
	char *path = fmt("%s/.config/hqt/hqt.ini", home), *err = NULL, *want;

	write_file(path, "[hqt]\nbogus = 1\n[sandbox]\nfs = rx\n", 0644);
	cr_assert_eq(config_load(&cfg, NULL, &w, &err), -1);
	want = fmt("%s:4: bad value 'rx' for sandbox.fs (accepted: rw, ro)", path);
	cr_expect_str_eq(err, want);
	free(want);
	/* Warnings found before the error still reach the user. */
	cr_assert_eq(w.n, 1);
	want = fmt("%s:2: unknown key 'bogus' in [hqt]", path);
	cr_expect_str_eq(w.v[0], want);
	free(want);
	strv_clear(&w);
	free(err);
	free(path);
}

/* ---- precedence: overrides > environment > file > defaults -------------------- */

Test(config, overrides_beat_environment_beat_file)
{
	struct config cfg;
	char *err = NULL, *path = fmt("%s/c.ini", root);
	struct config_overrides ov = { .config = path };

	write_file(path, "[hqt]\nplugin_dir = /file/plugins\ndb = /file/hqt.db\ntmux_socket = file\n", 0644);

	cr_assert_eq(config_load(&cfg, &ov, NULL, &err), 0, "%s", err);
	cr_expect_str_eq(cfg.plugin_dir, "/file/plugins");
	cr_expect_str_eq(cfg.db_path, "/file/hqt.db");
	cr_expect_str_eq(cfg.tmux_socket, "file");
	config_free(&cfg);

	setenv("HQT_PLUGIN_DIR", "/env/plugins", 1);
	setenv("HQT_DB", "/env/hqt.db", 1);
	cr_assert_eq(config_load(&cfg, &ov, NULL, &err), 0, "%s", err);
	cr_expect_str_eq(cfg.plugin_dir, "/env/plugins");
	cr_expect_str_eq(cfg.db_path, "/env/hqt.db");
	config_free(&cfg);

	ov.plugin_dir = "/cli/plugins";
	ov.db = "/cli/hqt.db";
	ov.tmux_socket = "cli";
	cr_assert_eq(config_load(&cfg, &ov, NULL, &err), 0, "%s", err);
	cr_expect_str_eq(cfg.plugin_dir, "/cli/plugins");
	cr_expect_str_eq(cfg.db_path, "/cli/hqt.db");
	cr_expect_str_eq(cfg.tmux_socket, "cli");
	config_free(&cfg);

	/* --tmux-socket "" picks the default server over the file's. */
	ov.tmux_socket = "";
	cr_assert_eq(config_load(&cfg, &ov, NULL, &err), 0, "%s", err);
	cr_expect_str_eq(cfg.tmux_socket, "");
	config_free(&cfg);
	free(path);
}

Test(config, environment_beats_defaults_and_empty_counts_as_unset)
{
	struct config cfg;
	char *err = NULL, *want;

	setenv("HQT_DB", "~/my.db", 1);
	setenv("HQT_PLUGIN_DIR", "", 1);
	cr_assert_eq(config_load(&cfg, NULL, NULL, &err), 0, "%s", err);
	want = fmt("%s/my.db", home);
	cr_expect_str_eq(cfg.db_path, want);
	free(want);
	cr_expect_eq(cfg.plugin_dir[0], '/');
	config_free(&cfg);

	/* Relative paths from the command line or environment: the cwd's. */
	cr_assert_eq(chdir(root), 0);
	setenv("HQT_DB", "rel/x.db", 1);
	cr_assert_eq(config_load(&cfg, &(struct config_overrides){ .plugin_dir = "p" }, NULL, &err),
		     0, "%s", err);
	want = fmt("%s/rel/x.db", root);
	cr_expect_str_eq(cfg.db_path, want);
	free(want);
	want = fmt("%s/p", root);
	cr_expect_str_eq(cfg.plugin_dir, want);
	free(want);
	config_free(&cfg);
}

Test(config, bad_overrides_are_errors)
{
	struct config cfg;
	char *err = NULL;

	cr_assert_eq(config_load(&cfg, &(struct config_overrides){ .tmux_socket = "a:b" }, NULL, &err), -1);
	cr_expect_str_eq(err, "bad value 'a:b' for --tmux-socket (accepted: empty, or letters, "
			      "digits, '_' and '-', not starting with '-', at most 64 characters)");
	cr_assert_eq(config_load(&cfg, &(struct config_overrides){ .db = "" }, NULL, &err), -1);
	cr_expect_str_eq(err, "--db: empty path");
	cr_assert_eq(config_load(&cfg, &(struct config_overrides){ .plugin_dir = "" }, NULL, &err), -1);
	cr_expect_str_eq(err, "--plugin-dir: empty path");
	free(err);
}

/* ---- memory --------------------------------------------------------------------- */

Test(config, free_is_safe_on_zeroed_and_failed_configs)
{
	struct config cfg;

	memset(&cfg, 0, sizeof cfg);
	config_free(&cfg);
	config_free(&cfg);
	config_free(NULL);
	cr_assert_eq(parse(&cfg, "[sandbox]\nfs = x\n", NULL, NULL), -1);
	config_free(&cfg);
	config_defaults(&cfg);
	config_free(&cfg);
	config_free(&cfg);
}

/* [sandbox] net = allow[:LIST] and --net: the one grammar (config_net_parse). */
Test(config, net_allow_entries_are_names_ports_and_plus)
{
	static const struct { const char *in, *out; } good[] = {
		{ "allow", "+" },
		{ "allow:+", "+" },
		{ "ALLOW:Api.Example.COM", "api.example.com:443" },
		{ "allow:+, github.com:22, *.googleapis.com", "+ github.com:22 '*.googleapis.com:443'" },
		{ "allow:a.b,a.b:443,A.B", "a.b:443" },
		{ "allow:x-1.example.org:65535", "x-1.example.org:65535" },
	};
	static const char *const bad[] = {
		"allow:", "allow:,", "allow:localhost", "allow:127.0.0.1", "allow:127.1",
		"allow:2130706433", "allow:0x7f.0.0.1", "allow:[::1]", "allow:::1", "allow:*",
		"allow:*.com", "allow:a.b:0", "allow:a.b:65536", "allow:a.b:+1", "allow:a.b:08",
		"allow:a.b:", "allow:-a.b", "allow:a-.b", "allow:a..b", "allow:a.b.", "allow:a_b.c",
		"allow:a.b/x", "allow:a.b@c.d", "allow:a.b\tc", "allow:*.*.b", "deny", "maybe",
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		struct config_net n = { false, false, STRV_INIT };
		char *why = NULL, *got;

		cr_assert_eq(config_net_parse(good[i].in, &n, &why), 0, "%s: %s", good[i].in, why);
		cr_expect(n.allow && !n.on, "%s", good[i].in);
		got = strv_join_quoted(&n.list);
		cr_expect_str_eq(got, good[i].out, "%s", good[i].in);
		free(got);
		strv_clear(&n.list);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct config_net n = { false, false, STRV_INIT };
		char *why = NULL;

		cr_expect_eq(config_net_parse(bad[i], &n, &why), -1, "took '%s'", bad[i]);
		cr_expect(why != NULL && strchr(why, '\n') == NULL, "%s", bad[i]);
		cr_expect_eq(n.list.n, 0);
		free(why);
	}
	/* on and off as before, every spelling of a boolean */
	struct config_net n = { false, false, STRV_INIT };
	cr_assert_eq(config_net_parse("yes", &n, NULL), 0);
	cr_expect(n.on && !n.allow);
	cr_assert_eq(config_net_parse("off", &n, NULL), 0);
	cr_expect(!n.on && !n.allow);

	struct config cfg;
	struct strv warn = STRV_INIT;
	char *err = NULL;
	cr_assert_eq(config_parse_string(&cfg, "[sandbox]\nnet = allow:+,github.com\n", "t.ini",
					 &warn, &err), 0, "%s", err);
	cr_expect(!cfg.sandbox.net && cfg.sandbox.net_allow);
	cr_expect_eq(cfg.sandbox.net_list.n, 2);
	config_free(&cfg);
}
