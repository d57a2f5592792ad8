/* test-plugin-host.c: real bad plugins, one per refusal reason, loaded beside
 * the good ones with dlopen: each refused with its reason, the rest loaded. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "plugin-host.h"
#include "support.h"
#include "util.h"

static char *dir;

static void
copy(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	char buf[65536];
	ssize_t n;

	cr_assert(in >= 0, "open %s", from);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert(out >= 0, "open %s", to);
	while ((n = read(in, buf, sizeof buf)) > 0)
		cr_assert(write(out, buf, (size_t)n) == n);
	close(in);
	close(out);
	cr_assert(chmod(to, mode) == 0);
}

static void
add_fixture(const char *name, const char *as, mode_t mode)
{
	char *from = fmt("%s/%s.so", getenv("HQT_FIXTURE_DIR"), name);
	char *to = fmt("%s/%s.so", dir, as ? as : name);

	copy(from, to, mode);
	free(from);
	free(to);
}

static void
add_shipped(const char *name)
{
	char *from = fmt("%s/%s.so", getenv("HQT_TEST_PLUGIN_DIR"), name);
	char *to = fmt("%s/%s.so", dir, name);

	copy(from, to, 0755);
	free(from);
	free(to);
}

static void
setup(void)
{
	dir = tmpdir_new();
	chmod(dir, 0755);
}

static void
teardown(void)
{
	rm_rf(dir);
	free(dir);
}

static void
load(struct registry *reg, struct config *cfg, const char *names)
{
	char *err = NULL;

	memset(cfg, 0, sizeof *cfg);
	cfg->plugin_dir = xstrdup(dir);
	strv_split(&cfg->plugins_load, names, ',', 0);
	cr_assert_eq(registry_load(reg, cfg, &err), 0, "registry_load: %s", err);
}

static const char *
refusal(const struct registry *reg, const char *file)
{
	char *path = fmt("%s/%s", dir, file);
	const char *why = NULL;

	for (size_t i = 0; i < reg->nrefused; i++)
		if (strcmp(reg->refused[i].file, path) == 0)
			why = reg->refused[i].reason;
	free(path);
	return why;
}

static bool
loaded(const struct registry *reg, const char *name)
{
	for (size_t i = 0; i < reg->nplugins; i++)
		if (strcmp(reg->plugins[i].desc->name, name) == 0)
			return true;
	return false;
}

TestSuite(plugin_host, .init = setup, .fini = teardown);

Test(plugin_host, every_bad_fixture_refused_with_its_reason_good_ones_load)
{
	static const struct { const char *file, *reason; } bad[] = {
		{ "undefined-symbol.so", "dlopen failed: " },
		{ "no-entry.so", "no entry symbol hqt_plugin_query" },
		{ "null-entry.so", "entry returned NULL: this fixture always refuses" },
		{ "major.so", "ABI major version 2, this hqt has 1" },
		{ "minor.so", "is newer than this hqt's" },
		{ "small.so", "descriptor too small" },
		{ "empty-name.so", "required field 'name' is NULL or empty" },
		{ "no-spawn.so", "required field 'build_spawn' is NULL or empty" },
		{ "zz-dup-claude.so", "duplicate harness name 'claude' (already loaded from " },
		{ "group-writable.so", "writable by group" },
		{ "world-writable.so", "writable by others" },
		{ "directory.so", "not a regular file" },
		{ "garbage.so", "dlopen failed: " },
	};
	struct registry reg;
	struct config cfg;
	char *sub = fmt("%s/directory.so", dir), *junk = fmt("%s/garbage.so", dir);

	add_shipped("claude");
	add_shipped("codex");
	add_shipped("kiro");
	add_shipped("generic");
	add_fixture("good", NULL, 0755);
	for (size_t i = 0; i < 9; i++) {
		char *name = xstrndup(bad[i].file, strlen(bad[i].file) - 3);
		add_fixture(strncmp(name, "zz-", 3) == 0 ? name + 3 : name, name, 0755);
		free(name);
	}
	add_fixture("good", "group-writable", 0775);
	add_fixture("good", "world-writable", 0757);
	cr_assert(mkdir(sub, 0755) == 0);
	write_file(junk, "this is not an ELF file\n", 0755);

	load(&reg, &cfg, "*");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *why = refusal(&reg, bad[i].file);
		cr_assert_not_null(why, "%s was not refused", bad[i].file);
		cr_expect(strstr(why, bad[i].reason) != NULL, "%s: got '%s', want '%s'",
			  bad[i].file, why, bad[i].reason);
	}
	cr_expect_eq(reg.nrefused, sizeof bad / sizeof bad[0]);
	char *minor = fmt("ABI version %d.%d is newer than this hqt's %d.%d",
			  HQT_PLUGIN_ABI_MAJOR, HQT_PLUGIN_ABI_MINOR + 1, HQT_PLUGIN_ABI_MAJOR,
			  HQT_PLUGIN_ABI_MINOR);
	cr_expect_str_eq(refusal(&reg, "minor.so"), minor);
	free(minor);
	cr_expect(loaded(&reg, "claude"));
	cr_expect(loaded(&reg, "codex"));
	cr_expect(loaded(&reg, "kiro"));
	cr_expect(loaded(&reg, "generic"));
	cr_expect(loaded(&reg, "fixture_good"));
	cr_expect_eq(reg.nplugins, 5);
	/* The host is unharmed: a loaded plugin still builds its command. */
	const struct harness *h = registry_harness(&reg, "fixture_good");
	cr_assert_not_null(h);
	struct hqt_request req = { .struct_size = sizeof req, .project_path = "/srv/p" };
	struct hqt_cmd cmd;
	char *err = NULL;
	hqt_cmd_init(&cmd);
	cr_assert_eq(harness_build_spawn(h, &req, &cmd, &err), 0);
	cr_expect_str_eq(cmd.argv.v[0], "true");
	cr_expect_str_eq(cmd.cwd, "/srv/p");
	hqt_cmd_clear(&cmd);
	registry_free(&reg);
	config_free(&cfg);
	free(sub);
	free(junk);
}

/* A descriptor shorter than this hqt's (ending right after build_resume,
 * junk after it): loaded, and its missing optional fields are absent, never
 * the bytes past its end (the host reads a zeroed copy). */
Test(plugin_host, short_descriptor_reads_nothing_past_it)
{
	struct registry reg;
	struct config cfg;
	char *id = NULL, *err = NULL;

	add_fixture("short", NULL, 0755);
	load(&reg, &cfg, "*");
	cr_assert(loaded(&reg, "fixture_short"), "%s",
		  reg.nrefused ? reg.refused[0].reason : "");
	const struct harness *h = registry_harness(&reg, "fixture_short");
	cr_assert_not_null(h);
	cr_expect_null(h->plugin->desc->generate_session_id);
	cr_expect_null(h->plugin->desc->capture_session_id);
	cr_expect_null(h->plugin->desc->parse_status);
	/* and the host's calls treat them as not provided */
	cr_expect_eq(harness_generate_id(h, &id, &err), 1, "%s", err ? err : "");
	cr_expect_null(id);
	cr_expect_eq(harness_parse_status(h, "x", 1), HQT_STATUS_UNKNOWN);
	struct hqt_request req = { .struct_size = sizeof req, .project_path = "/srv/p" };
	char *cap = NULL;
	cr_expect_eq(harness_capture_id(h, &req, &cap, &err), 0);
	registry_free(&reg);
	config_free(&cfg);
}

/* The id calls' return values, each meaning one thing from ABI 1.4; a
 * plugin of 1.3 still read its way (1: "the harness picks" and "found",
 * 0: "not yet"); a value a call does not return is an error. */
static void
expect_returns(const char *fixture)
{
	struct registry reg;
	struct config cfg;
	char *name = fmt("fixture_%s", fixture), *id = NULL, *err = NULL;

	add_fixture(fixture, NULL, 0755);
	load(&reg, &cfg, "*");
	const struct harness *h = registry_harness(&reg, name);
	cr_assert_not_null(h, "%s: %s", name, reg.nrefused ? reg.refused[0].reason : "");
	cr_expect_eq(harness_generate_id(h, &id, &err), 1, "%s: %s", name, err ? err : "");
	cr_expect_null(id);
	struct hqt_request req = { .struct_size = sizeof req, .project_path = "/srv/found" };
	cr_expect_eq(harness_capture_id(h, &req, &id, &err), 1, "%s: %s", name, err ? err : "");
	cr_expect_str_eq(id ? id : "", "0b0e6a3c-9f0e-4c1a-8d5e-2f1c3b4a5d6e", "%s", name);
	free(id);
	id = NULL;
	req.project_path = "/srv/later";
	cr_expect_eq(harness_capture_id(h, &req, &id, &err), 0, "%s: %s", name, err ? err : "");
	cr_expect_null(id);
	req.project_path = "/srv/odd";
	cr_expect_eq(harness_capture_id(h, &req, &id, &err), -1, "%s", name);
	cr_expect(err != NULL && strstr(err, "returned 7") != NULL, "%s: %s", name,
		  err ? err : "(none)");
	free(err);
	free(name);
	registry_free(&reg);
	config_free(&cfg);
}

Test(plugin_host, return_values_of_abi_1_4_and_of_1_3)
{
	expect_returns("returns14");
	expect_returns("returns13");
}

Test(plugin_host, foreign_owner_refused)
{
	struct registry reg;
	struct config cfg;
	char *path = fmt("%s/foreign.so", dir);

	if (geteuid() != 0)
		cr_skip_test("needs root to give a file to another user");
	add_fixture("good", "foreign", 0755);
	cr_assert(chown(path, 12345, 12345) == 0);
	load(&reg, &cfg, "*");
	cr_assert_not_null(refusal(&reg, "foreign.so"));
	cr_expect(strstr(refusal(&reg, "foreign.so"), "owned by uid 12345, neither root nor the user"));
	registry_free(&reg);
	config_free(&cfg);
	free(path);
}

Test(plugin_host, unsafe_directory_refuses_every_plugin)
{
	struct registry reg;
	struct config cfg;

	add_shipped("claude");
	cr_assert(chmod(dir, 0777) == 0);
	load(&reg, &cfg, "*");
	cr_expect_eq(reg.nplugins, 0);
	cr_assert_eq(reg.nrefused, 1);
	cr_expect_str_eq(reg.refused[0].reason, "plugin directory is writable by others");
	registry_free(&reg);
	config_free(&cfg);
}

Test(plugin_host, load_by_name_and_missing_name)
{
	struct registry reg;
	struct config cfg;

	add_shipped("claude");
	add_shipped("codex");
	load(&reg, &cfg, "claude, nosuch");
	cr_expect(loaded(&reg, "claude"));
	cr_expect(!loaded(&reg, "codex"));
	cr_assert_eq(reg.nrefused, 1);
	cr_expect(strstr(reg.refused[0].reason, "not found (named in [plugins] load)") != NULL, "%s",
		  reg.refused[0].reason);
	registry_free(&reg);
	config_free(&cfg);
}

Test(plugin_host, missing_directory_is_an_error)
{
	struct registry reg;
	struct config cfg;
	char *err = NULL;

	memset(&cfg, 0, sizeof cfg);
	cfg.plugin_dir = fmt("%s/nope", dir);
	strv_push(&cfg.plugins_load, "*");
	cr_assert_eq(registry_load(&reg, &cfg, &err), -1);
	cr_expect(strstr(err, "No such file or directory") != NULL, "%s", err);
	free(err);
	registry_free(&reg);
	config_free(&cfg);
}

Test(plugin_host, out_of_tree_example_builds_with_pkg_config_and_loads)
{
	struct registry reg;
	struct config cfg;
	struct run r;
	char *src = fmt("%s/examples/hello-plugin", source_dir());
	char *work = fmt("%s/hello", dir);
	char *pc = fmt("PKG_CONFIG_PATH=%s/pkgconfig", build_dir());
	const char *cp[] = { "cp", "-r", src, work, NULL };
	const char *mk[] = { "make", "-s", "-C", work, NULL };
	struct tenv te = { 0 };

	run_argv(&r, NULL, cp, NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	tenv_set(&te, pc);
	run_argv(&r, &te, mk, NULL);
	cr_assert_eq(r.code, 0, "make failed: %s%s", r.out, r.err);
	run_free(&r);
	char *so = fmt("%s/hello.so", work), *dst = fmt("%s/hello.so", dir);
	copy(so, dst, 0755);
	load(&reg, &cfg, "*");
	cr_assert(loaded(&reg, "hello"), "refused: %s",
		  reg.nrefused ? reg.refused[0].reason : "-");
	registry_free(&reg);
	config_free(&cfg);
	for (size_t i = 0; i < te.nextra; i++)
		free(te.extra[i]);
	free(te.extra);
	free(so); free(dst); free(src); free(work); free(pc);
}

/* registry_load_for: only the plugins the named harnesses need; 1 (and an
 * empty registry) whenever that cannot serve them all, so the caller loads
 * everything and says what is wrong. */
Test(plugin_host, load_for_only_what_the_harnesses_need)
{
	struct registry reg;
	struct config cfg;
	struct strv warnings = STRV_INIT;
	char *err = NULL, *ini;
	char *one[] = { "claude" }, *two[] = { "aider", "codex", "aider" };
	char *unknown[] = { "claude", "nosuch" }, *own[] = { "generic" }, *renamed[] = { "x" };

	add_shipped("claude");
	add_shipped("codex");
	add_shipped("kiro");
	add_shipped("generic");
	char *from = fmt("%s/codex.so", dir), *to = fmt("%s/other.so", dir);
	copy(from, to, 0755);
	free(from);
	free(to);
	ini = fmt("[plugins]\nload = *\n[harness.aider]\nplugin = generic\ncommand = aider\n"
		  "[harness.x]\nplugin = other\n");
	cr_assert_eq(config_parse_string(&cfg, ini, "t.ini", &warnings, &err), 0, "%s", err);
	free(cfg.plugin_dir);
	cfg.plugin_dir = xstrdup(dir);

	cr_assert_eq(registry_load_for(&reg, &cfg, one, 1, &err), 0);
	cr_assert(reg.partial);
	cr_assert_eq(reg.nplugins, 1);
	cr_assert(loaded(&reg, "claude"));
	cr_assert_not_null(registry_harness(&reg, "claude"));
	registry_free(&reg);

	cr_assert_eq(registry_load_for(&reg, &cfg, two, 3, &err), 0);
	cr_assert_eq(reg.nplugins, 2);
	cr_assert(loaded(&reg, "generic") && loaded(&reg, "codex") && !loaded(&reg, "claude"));
	cr_assert_eq(reg.nharnesses, 2);
	cr_assert_str_eq(registry_harness(&reg, "aider")->plugin->desc->name, "generic");
	registry_free(&reg);

	/* Unknown; a multi plugin's own name (it serves sections only); a
	 * file named for another plugin than it holds: load everything. */
	cr_assert_eq(registry_load_for(&reg, &cfg, unknown, 2, &err), 1);
	cr_assert_eq(reg.nplugins, 0);
	cr_assert_eq(registry_load_for(&reg, &cfg, own, 1, &err), 1);
	cr_assert_eq(registry_load_for(&reg, &cfg, renamed, 1, &err), 1);
	cr_assert_eq(reg.nplugins, 0);

	/* Not allowed by [plugins] load: the whole load says so. */
	strv_clear(&cfg.plugins_load);
	strv_push(&cfg.plugins_load, "codex");
	cr_assert_eq(registry_load_for(&reg, &cfg, one, 1, &err), 1);
	config_free(&cfg);
	strv_clear(&warnings);
	free(ini);
}
