/* test-plugins.c: the shipped harness plugins, loaded from their built .so
 * files through the registry: exact argv, env, binds, skip flags, screen
 * status and session-id capture, each in a throw-away $HOME. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "config.h"
#include "plugin-host.h"
#include "support.h"
#include "util.h"

#define ID "0b0e6a3c-9f0e-4c1a-8d5e-2f1c3b4a5d6e"
#define HOSTILE "x'; rm -rf ~ \"$(touch pwned)\" `id` $HOME\nsecond line"

static char *root, *home, *project;
static struct config cfg;
static struct registry reg;

static void
setup(void)
{
	root = tmpdir_new();
	home = fmt("%s/home", root);
	project = fmt("%s/project", root);
	cr_assert(mkdir(home, 0700) == 0 && mkdir(project, 0700) == 0);
	setenv("HOME", home, 1);
	unsetenv("CODEX_HOME");
	unsetenv("XDG_DATA_HOME");
}

static void
teardown(void)
{
	registry_free(&reg);
	config_free(&cfg);
	rm_rf(root);
	free(root);
	free(home);
	free(project);
}

TestSuite(plugins, .init = setup, .fini = teardown);

/* Load every shipped plugin with `ini` as the rest of hqt.ini. */
static void
load(const char *ini)
{
	struct strv warnings = STRV_INIT;
	char *text = fmt("[plugins]\nload = *\n%s", ini ? ini : "");
	char *err = NULL;

	cr_assert_eq(config_parse_string(&cfg, text, "test.ini", &warnings, &err), 0,
		     "config: %s", err);
	cr_assert_eq(warnings.n, 0, "config warning: %s", warnings.n ? warnings.v[0] : "");
	free(cfg.plugin_dir);
	cfg.plugin_dir = xstrdup(getenv("HQT_TEST_PLUGIN_DIR"));
	cr_assert_eq(registry_load(&reg, &cfg, &err), 0, "registry: %s", err);
	cr_assert_eq(reg.nrefused, 0, "refused: %s", reg.nrefused ? reg.refused[0].reason : "");
	strv_clear(&warnings);
	free(text);
}

static const struct harness *
harness(const char *name)
{
	const struct harness *h;

	if (reg.nplugins == 0)
		load(NULL);
	h = registry_harness(&reg, name);
	cr_assert_not_null(h, "no harness %s", name);
	return h;
}

static struct hqt_request
request(const char *id, const char *model, int sandboxed, unsigned uid)
{
	return (struct hqt_request){ .struct_size = sizeof(struct hqt_request),
				     .project_path = project, .harness_session_id = id,
				     .model = model, .sandboxed = sandboxed, .uid = uid,
				     .spawned_at = time(NULL) - 60 };
}

static void
spawn(struct hqt_cmd *cmd, const char *name, struct hqt_request req)
{
	char *err = NULL;

	hqt_cmd_init(cmd);
	cr_assert_eq(harness_build_spawn(harness(name), &req, cmd, &err), 0, "%s", err);
	cr_expect_str_eq(cmd->cwd, project);
}

/* The resume result (0 built, 1 fresh); cmd is built either way. */
static int
resume(struct hqt_cmd *cmd, const char *name, struct hqt_request req)
{
	char *err = NULL;
	int rc;

	hqt_cmd_init(cmd);
	rc = harness_build_resume(harness(name), &req, cmd, &err);
	cr_assert(rc == 0 || rc == 1, "%s", err);
	if (rc == 0)
		cr_expect_str_eq(cmd->cwd, project);
	else
		cr_expect_eq(cmd->argv.n, 0);
	return rc;
}

/* The error text of a build that must fail. */
static char *
spawn_error(const char *name, struct hqt_request req)
{
	struct hqt_cmd cmd;
	char *err = NULL;

	hqt_cmd_init(&cmd);
	cr_assert_eq(harness_build_spawn(harness(name), &req, &cmd, &err), -1);
	hqt_cmd_clear(&cmd);
	cr_assert_not_null(err);
	return err;
}

/* sv must be exactly the NULL-terminated words that follow. */
static void
expect_words(const struct strv *sv, ...)
{
	char *got = strv_join_quoted(sv);
	const char *w;
	size_t i = 0;
	va_list ap;

	va_start(ap, sv);
	while ((w = va_arg(ap, const char *)) != NULL) {
		cr_expect(i < sv->n && strcmp(sv->v[i], w) == 0, "word %zu should be '%s' in: %s",
			  i, w, got);
		i++;
	}
	va_end(ap);
	cr_expect_eq(sv->n, i, "want %zu words, got: %s", i, got);
	free(got);
}

/* rel: under $HOME, or absolute, or (flags with HQT_BIND_PROJECT) as is. */
static void
expect_bind(const struct hqt_binds *b, const char *rel, unsigned flags)
{
	char *path = rel[0] == '/' || (flags & HQT_BIND_PROJECT) ? xstrdup(rel)
								: fmt("%s/%s", home, rel);
	bool found = false;

	for (size_t i = 0; i < b->n; i++) {
		if (strcmp(b->v[i].path, path) == 0) {
			cr_expect_eq(b->v[i].flags, flags, "%s: flags %u, want %u", path,
				     b->v[i].flags, flags);
			found = true;
		}
	}
	cr_expect(found, "no bind of %s", path);
	free(path);
}

static void
set_mtime(const char *path, time_t t)
{
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };

	cr_assert(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

/* ---- claude ---- */

Test(plugins, claude_spawn_argv)
{
	struct hqt_cmd c;

	spawn(&c, "claude", request(ID, NULL, 0, 1000));
	expect_words(&c.argv, "claude", "--session-id", ID, NULL);
	expect_words(&c.env, NULL);
	hqt_cmd_clear(&c);

	spawn(&c, "claude", request(ID, "opus", 1, 1000));
	/* sandboxed: the skip flag and the acceptance of its warning (hqt
	 * consent), per launch */
	expect_words(&c.argv, "claude", "--session-id", ID, "--model", "opus",
		     "--dangerously-skip-permissions", "--settings", "{\"skipDangerousModePermissionPrompt\":true}", NULL);
	expect_words(&c.env, NULL);
	hqt_cmd_clear(&c);
}

Test(plugins, claude_is_sandbox_only_for_root_in_a_sandbox)
{
	struct hqt_cmd c;

	spawn(&c, "claude", request(ID, NULL, 1, 0));
	expect_words(&c.argv, "claude", "--session-id", ID, "--dangerously-skip-permissions",
		     "--settings", "{\"skipDangerousModePermissionPrompt\":true}", NULL);
	expect_words(&c.env, "IS_SANDBOX=1", NULL);
	hqt_cmd_clear(&c);

	spawn(&c, "claude", request(ID, NULL, 0, 0));
	expect_words(&c.argv, "claude", "--session-id", ID, NULL);
	expect_words(&c.env, NULL);
	hqt_cmd_clear(&c);
}

Test(plugins, claude_resumes_only_with_a_transcript)
{
	struct hqt_cmd c;
	char *other = fmt("%s/.claude/projects/-srv-x/%s.jsonl", home,
			  "11111111-2222-4333-8444-555555555555");
	char *mine = fmt("%s/.claude/projects/-srv-project/%s.jsonl", home, ID);

	cr_expect_eq(resume(&c, "claude", request(ID, "sonnet", 0, 1000)), 1);
	hqt_cmd_clear(&c);
	write_file(other, "{}\n", 0600);
	cr_expect_eq(resume(&c, "claude", request(ID, "sonnet", 0, 1000)), 1);
	hqt_cmd_clear(&c);

	write_file(mine, "{}\n", 0600);
	cr_assert_eq(resume(&c, "claude", request(ID, "sonnet", 0, 1000)), 0);
	expect_words(&c.argv, "claude", "--resume", ID, "--model", "sonnet", NULL);
	hqt_cmd_clear(&c);
	cr_assert_eq(resume(&c, "claude", request(ID, NULL, 1, 0)), 0);
	expect_words(&c.argv, "claude", "--resume", ID, "--dangerously-skip-permissions",
		     "--settings", "{\"skipDangerousModePermissionPrompt\":true}", NULL);
	expect_words(&c.env, "IS_SANDBOX=1", NULL);
	hqt_cmd_clear(&c);
	free(other);
	free(mine);
}

Test(plugins, claude_generates_distinct_v4_uuids_and_refuses_other_ids)
{
	char *a, *b, *err = NULL;

	cr_assert_eq(harness_generate_id(harness("claude"), &a, &err), 0, "%s", err);
	cr_assert_eq(harness_generate_id(harness("claude"), &b, &err), 0, "%s", err);
	cr_expect_str_neq(a, b);
	cr_assert_eq(strlen(a), 36);
	for (size_t i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			cr_expect_eq(a[i], '-', "%s", a);
		else
			cr_expect(strchr("0123456789abcdef", a[i]) != NULL, "%s", a);
	}
	cr_expect_eq(a[14], '4', "version of %s", a);
	cr_expect(strchr("89ab", a[19]) != NULL, "variant of %s", a);
	free(a);
	free(b);

	err = spawn_error("claude", request("../../etc/passwd", NULL, 0, 1000));
	cr_expect(strstr(err, "uuid") != NULL, "%s", err);
	free(err);
}

Test(plugins, claude_skip_flags_and_binds)
{
	struct strv flags = STRV_INIT;
	struct hqt_binds b = { NULL, 0 };

	harness_skip_flags(harness("claude"), &flags);
	expect_words(&flags, "--dangerously-skip-permissions", NULL);
	harness_binds(harness("claude"), &b);
	expect_bind(&b, ".claude", HQT_BIND_STATE);
	expect_bind(&b, ".claude.json", HQT_BIND_SEED | HQT_BIND_RW);
	/* what the user set up: read-only over the session's own ~/.claude */
	expect_bind(&b, ".claude/settings.json", HQT_BIND_RO);
	expect_bind(&b, ".claude/settings.local.json", HQT_BIND_RO);
	expect_bind(&b, ".claude/CLAUDE.md", HQT_BIND_RO);
	expect_bind(&b, ".claude/rules/", HQT_BIND_RO);
	expect_bind(&b, ".claude/hooks/", HQT_BIND_RO);
	expect_bind(&b, ".claude/plugins/", HQT_BIND_RO);
	expect_bind(&b, ".claude/commands/", HQT_BIND_RO);
	expect_bind(&b, ".claude/agents/", HQT_BIND_RO);
	expect_bind(&b, ".claude/skills/", HQT_BIND_RO);
	expect_bind(&b, ".claude/output-styles/", HQT_BIND_RO);
	expect_bind(&b, ".claude/keybindings.json", HQT_BIND_RO);
	expect_bind(&b, ".claude/.credentials.json", HQT_BIND_RO);
	expect_bind(&b, ".claude/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	expect_bind(&b, ".mcp.json", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	expect_bind(&b, "CLAUDE.local.md", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	cr_expect_eq(b.n, 17);
	strv_clear(&flags);
	binds_clear(&b);
}

/* The scripts claude's settings run (hooks, status line, helpers) and that
 * live in ~/.claude, where a session could rewrite them: protected. */
Test(plugins, claude_protects_the_scripts_its_settings_run)
{
	struct hqt_binds b = { NULL, 0 };
	char *claude = fmt("%s/.claude", home);

	write_file(fmt("%s/statusline-command.sh", claude), "echo hi\n", 0755);
	write_file(fmt("%s/scripts/guard.py", claude), "print()\n", 0644);
	write_file(fmt("%s/key.sh", claude), "echo k\n", 0755);
	/* "${HOME}/.claude/x.sh" is read whole */
	write_file(fmt("%s/braced.sh", claude), "x\n", 0755);
	write_file(fmt("%s/notes.md", claude), "notes\n", 0644);
	write_file(fmt("%s/other.sh", claude), "x\n", 0755);
	cr_assert_eq(mkdir(fmt("%s/projects", claude), 0755), 0);
	write_file(fmt("%s/settings.json", claude),
		   "{\"statusLine\": {\"type\": \"command\", "
		   "\"command\": \"bash ~/.claude/statusline-command.sh\"},\n"
		   " \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": "
		   "\"command\", \"command\": \"python3 \\\"$HOME/.claude/scripts/guard.py\\\" "
		   "--x=~/.claude/../.bashrc\"}]}],\n"
		   "   \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": "
		   "\"${HOME}/.claude/braced.sh; ~/.claude/missing.sh; /usr/bin/true; "
		   "ls ~/.claude/projects\"}]}]},\n"
		   " \"apiKeyHelper\": \"~/.claude/key.sh\",\n"
		   " \"permissions\": {\"allow\": [\"Read(~/.claude/notes.md)\"]},\n"
		   " \"other\": \"~/.claude/other.sh\"}\n", 0600);
	harness_binds(harness("claude"), &b);
	expect_bind(&b, ".claude/statusline-command.sh", HQT_BIND_RO);
	expect_bind(&b, ".claude/scripts/guard.py", HQT_BIND_RO);
	expect_bind(&b, ".claude/key.sh", HQT_BIND_RO);
	expect_bind(&b, ".claude/braced.sh", HQT_BIND_RO);
	cr_expect_eq(b.n, 21, "only those four more");
	for (size_t i = 0; i < b.n; i++)
		cr_expect(!strstr(b.v[i].path, "notes.md") && !strstr(b.v[i].path, "other.sh") &&
			  !strstr(b.v[i].path, ".bashrc") && !strstr(b.v[i].path, "/usr/bin") &&
			  !strstr(b.v[i].path, "projects") && !strstr(b.v[i].path, "missing"),
			  "%s", b.v[i].path);
	binds_clear(&b);

	/* Not JSON: nothing more, and no crash. */
	write_file(fmt("%s/settings.json", claude), "{\"command\": \"~/.claude/key.sh\"", 0600);
	harness_binds(harness("claude"), &b);
	cr_expect_eq(b.n, 17);
	binds_clear(&b);
	free(claude);
}

/* ---- codex ---- */

Test(plugins, codex_spawn_and_resume_argv)
{
	struct hqt_cmd c;

	spawn(&c, "codex", request(NULL, NULL, 0, 1000));
	expect_words(&c.argv, "codex", "--no-daemon", NULL);
	expect_words(&c.env, NULL);
	hqt_cmd_clear(&c);
	spawn(&c, "codex", request(NULL, "gpt-5", 1, 0));
	expect_words(&c.argv, "codex", "--no-daemon", "-m", "gpt-5",
		     "--dangerously-bypass-approvals-and-sandbox",
		     NULL);
	expect_words(&c.env, NULL);
	hqt_cmd_clear(&c);

	cr_expect_eq(resume(&c, "codex", request(NULL, "gpt-5", 1, 1000)), 1);
	hqt_cmd_clear(&c);
	cr_assert_eq(resume(&c, "codex", request("019a2b3c-aaaa", NULL, 0, 1000)), 0);
	expect_words(&c.argv, "codex", "resume", "019a2b3c-aaaa", "--no-daemon", NULL);
	hqt_cmd_clear(&c);
	cr_assert_eq(resume(&c, "codex", request("019a2b3c-aaaa", "o3", 1, 1000)), 0);
	expect_words(&c.argv, "codex", "resume", "019a2b3c-aaaa", "--no-daemon", "-m", "o3",
		     "--dangerously-bypass-approvals-and-sandbox", NULL);
	hqt_cmd_clear(&c);
}

Test(plugins, codex_refuses_an_id_that_reads_as_a_flag)
{
	struct hqt_cmd c;
	struct hqt_request req = request("--yolo", NULL, 0, 1000);
	char *err = NULL;

	hqt_cmd_init(&c);
	cr_expect_eq(harness_build_resume(harness("codex"), &req, &c, &err), -1);
	cr_expect(err && strstr(err, "bad codex session id"), "%s", err);
	free(err);
	hqt_cmd_clear(&c);
}

Test(plugins, codex_home_binds_and_env)
{
	struct hqt_binds b = { NULL, 0 };
	struct strv flags = STRV_INIT;
	struct hqt_cmd c;
	char *alt = fmt("%s/codex-home", root), *cfgfile = fmt("%s/config.toml", alt);
	char *env = fmt("CODEX_HOME=%s", alt);

	harness_binds(harness("codex"), &b);
	expect_bind(&b, ".codex", HQT_BIND_STATE);
	expect_bind(&b, ".codex/config.toml", HQT_BIND_RO);
	expect_bind(&b, ".codex/AGENTS.md", HQT_BIND_RO);
	expect_bind(&b, ".codex/rules", HQT_BIND_RO);
	expect_bind(&b, ".codex/auth.json", HQT_BIND_RO);
	expect_bind(&b, ".codex/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	expect_bind(&b, "AGENTS.override.md", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	cr_expect_eq(b.n, 11);
	binds_clear(&b);
	harness_skip_flags(harness("codex"), &flags);
	expect_words(&flags, "--dangerously-bypass-approvals-and-sandbox", NULL);

	setenv("CODEX_HOME", alt, 1);
	harness_binds(harness("codex"), &b);
	expect_bind(&b, alt, HQT_BIND_STATE);
	expect_bind(&b, cfgfile, HQT_BIND_RO);
	expect_bind(&b, ".codex/", HQT_BIND_PROJECT | HQT_BIND_PROTECT); /* the project's, wherever CODEX_HOME is */
	cr_expect_eq(b.n, 11);
	binds_clear(&b);

	/* What config.toml runs from inside the codex home: protected. */
	char *notify = fmt("%s/notify.py", alt), *mcp = fmt("%s/mcp/server.js", alt);
	write_file(notify, "print()\n", 0755);
	write_file(mcp, "//\n", 0644);
	write_file(cfgfile, fmt("model = \"o3\"\nnotify = [\"python3\", \"%s\"]\n"
				"[mcp_servers.x]\ncommand = \"node\"\nargs = ['%s']\n"
				"[mcp_servers.y]\ncommand = \"/usr/bin/env\"\n"
				"log = \"%s/sessions\"\n# \"%s/gone.py\"\n", notify, mcp, alt, alt),
		   0600);
	cr_assert_eq(mkdir(fmt("%s/sessions", alt), 0755), 0);
	harness_binds(harness("codex"), &b);
	expect_bind(&b, notify, HQT_BIND_RO);
	expect_bind(&b, mcp, HQT_BIND_RO);
	cr_expect_eq(b.n, 13, "no directory, nothing outside the home");
	free(notify);
	free(mcp);
	spawn(&c, "codex", request(NULL, NULL, 1, 1000));
	expect_words(&c.env, env, NULL);
	hqt_cmd_clear(&c);
	binds_clear(&b);
	strv_clear(&flags);
	free(alt);
	free(cfgfile);
	free(env);
}

/* ---- kiro ---- */

Test(plugins, kiro_spawn_and_resume_argv)
{
	struct hqt_cmd c;

	spawn(&c, "kiro", request(NULL, NULL, 0, 1000));
	expect_words(&c.argv, "kiro-cli", "chat", NULL);
	hqt_cmd_clear(&c);
	spawn(&c, "kiro", request(NULL, "claude-sonnet-4", 1, 0));
	expect_words(&c.argv, "kiro-cli", "chat", "--model", "claude-sonnet-4",
		     "--trust-all-tools", NULL);
	expect_words(&c.env, NULL);
	hqt_cmd_clear(&c);

	cr_assert_eq(resume(&c, "kiro", request(NULL, "m1", 0, 1000)), 0);
	expect_words(&c.argv, "kiro-cli", "chat", "--resume", "--model", "m1", NULL);
	hqt_cmd_clear(&c);
	cr_assert_eq(resume(&c, "kiro", request(ID, NULL, 1, 1000)), 0);
	expect_words(&c.argv, "kiro-cli", "chat", "--resume-id", ID, "--trust-all-tools", NULL);
	hqt_cmd_clear(&c);
}

Test(plugins, kiro_binds_follow_xdg_data_home)
{
	struct hqt_binds b = { NULL, 0 };
	struct strv flags = STRV_INIT;
	struct hqt_cmd c;

	harness_binds(harness("kiro"), &b);
	expect_bind(&b, ".kiro", HQT_BIND_STATE);
	expect_bind(&b, ".local/share/kiro-cli", HQT_BIND_STATE);
	/* kiro's own token, never the whole SSO cache */
	expect_bind(&b, ".aws/sso/cache/kiro-auth-token.json", HQT_BIND_RO);
	for (size_t i = 0; i < b.n; i++)
		cr_expect(strcmp(b.v[i].path, fmt("%s/.aws/sso/cache", home)) != 0);
	expect_bind(&b, ".kiro/settings/", HQT_BIND_RO);
	expect_bind(&b, ".kiro/agents/", HQT_BIND_RO);
	expect_bind(&b, ".kiro/steering/", HQT_BIND_RO);
	expect_bind(&b, ".kiro/settings/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	expect_bind(&b, ".kiro/agents/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	expect_bind(&b, ".kiro/hooks/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	expect_bind(&b, ".kiro/steering/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	cr_expect_eq(b.n, 13);
	binds_clear(&b);

	/* What its agents and MCP servers run from inside ~/.kiro: protected. */
	write_file(fmt("%s/.kiro/scripts/spawn.sh", home), "x\n", 0755);
	write_file(fmt("%s/.kiro/mcp/server.js", home), "//\n", 0644);
	write_file(fmt("%s/.kiro/notes.md", home), "n\n", 0644);
	write_file(fmt("%s/.kiro/agents/dev.json", home),
		   "{\"hooks\": {\"agentSpawn\": [{\"command\": \"~/.kiro/scripts/spawn.sh\"}]},"
		   " \"prompt\": \"~/.kiro/notes.md\"}\n", 0644);
	write_file(fmt("%s/.kiro/settings/mcp.json", home),
		   "{\"mcpServers\": {\"x\": {\"command\": \"node\", "
		   "\"args\": [\"~/.kiro/mcp/server.js\", \"--port=1\"]}}}\n", 0644);
	harness_binds(harness("kiro"), &b);
	expect_bind(&b, ".kiro/scripts/spawn.sh", HQT_BIND_RO);
	expect_bind(&b, ".kiro/mcp/server.js", HQT_BIND_RO);
	cr_expect_eq(b.n, 15, "not the prompt file");
	binds_clear(&b);
	harness_skip_flags(harness("kiro"), &flags);
	expect_words(&flags, "--trust-all-tools", NULL);

	setenv("XDG_DATA_HOME", "/srv/data", 1);
	harness_binds(harness("kiro"), &b);
	expect_bind(&b, "/srv/data/kiro-cli", HQT_BIND_STATE);
	spawn(&c, "kiro", request(NULL, NULL, 1, 1000));
	expect_words(&c.env, "XDG_DATA_HOME=/srv/data", NULL);
	hqt_cmd_clear(&c);
	binds_clear(&b);
	strv_clear(&flags);
}

/* ---- generic ---- */

#define GENERIC_INI \
	"[harness.aider]\n" \
	"plugin = generic\n" \
	"command = aider --no-auto-commits\n" \
	"resume_command = aider --restore-chat-history\n" \
	"skip_permission_flags = --yes-always  --no-check-update\n" \
	"model_flag = --model\n" \
	"binds = ~/.aider.conf.yml:ro, ~/.aider , /srv/cache\n" \
	"project_protect = .aider.conf.yml, hooks/ci/\n" \
	"env = AIDER_DARK_MODE=1, EMPTY=\n" \
	"working_markers = Aider is thinking\n" \
	"waiting_markers = (Y)es/(N)o*[Yes]\n" \
	"[harness.plain]\n" \
	"plugin = generic\n" \
	"command = plain-agent\n"

Test(plugins, generic_builds_from_its_section)
{
	struct hqt_cmd c;
	struct strv flags = STRV_INIT;
	struct hqt_binds b = { NULL, 0 };

	load(GENERIC_INI);
	cr_expect_eq(reg.warnings.n, 0, "%s", reg.warnings.n ? reg.warnings.v[0] : "");
	spawn(&c, "aider", request(NULL, NULL, 0, 1000));
	expect_words(&c.argv, "aider", "--no-auto-commits", NULL);
	expect_words(&c.env, "AIDER_DARK_MODE=1", "EMPTY=", NULL);
	hqt_cmd_clear(&c);
	spawn(&c, "aider", request(NULL, "sonnet", 1, 1000));
	expect_words(&c.argv, "aider", "--no-auto-commits", "--model", "sonnet", "--yes-always",
		     "--no-check-update", NULL);
	hqt_cmd_clear(&c);
	cr_assert_eq(resume(&c, "aider", request(NULL, NULL, 1, 1000)), 0);
	expect_words(&c.argv, "aider", "--restore-chat-history", "--yes-always",
		     "--no-check-update", NULL);
	hqt_cmd_clear(&c);

	harness_skip_flags(harness("aider"), &flags);
	expect_words(&flags, "--yes-always", "--no-check-update", NULL);
	harness_binds(harness("aider"), &b);
	expect_bind(&b, ".aider.conf.yml", HQT_BIND_RO);
	expect_bind(&b, ".aider", HQT_BIND_STATE); /* writable: the session's own */
	expect_bind(&b, "/srv/cache", HQT_BIND_STATE);
	expect_bind(&b, ".aider.conf.yml", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	expect_bind(&b, "hooks/ci/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	cr_expect_eq(b.n, 5);
	strv_clear(&flags);
	binds_clear(&b);
}

Test(plugins, generic_minimal_section)
{
	struct hqt_cmd c;
	char *err;

	load(GENERIC_INI);
	spawn(&c, "plain", request(NULL, NULL, 1, 0));
	expect_words(&c.argv, "plain-agent", NULL);
	expect_words(&c.env, NULL);
	hqt_cmd_clear(&c);
	cr_expect_eq(resume(&c, "plain", request(NULL, NULL, 0, 1000)), 1);
	hqt_cmd_clear(&c);
	err = spawn_error("plain", request(NULL, "gpt-5", 0, 1000));
	cr_expect(strstr(err, "model_flag") != NULL, "%s", err);
	free(err);
}

/* {id}: a host-picked UUID where the CLI takes one; sandbox_env only when
 * sandboxed (a skip switch that is a variable). */
Test(plugins, generic_id_placeholder_and_sandbox_env)
{
	struct hqt_cmd c;
	char *id = NULL, *err = NULL;

	load("[harness.gem]\n"
	     "plugin = generic\n"
	     "command = gemini --session-id {id}\n"
	     "resume_command = gemini --resume={id}\n"
	     "sandbox_env = COPILOT_ALLOW_ALL=true, GEMINI_CLI_TRUST_WORKSPACE=true\n"
	     "env = A=1\n");
	cr_expect_eq(reg.warnings.n, 0, "%s", reg.warnings.n ? reg.warnings.v[0] : "");
	cr_assert_eq(harness_generate_id(harness("gem"), &id, &err), 0, "%s", err);
	cr_assert(id != NULL && strlen(id) == 36, "%s", id ? id : "(none)");
	spawn(&c, "gem", request(id, NULL, 0, 1000));
	expect_words(&c.argv, "gemini", "--session-id", id, NULL);
	expect_words(&c.env, "A=1", NULL);
	hqt_cmd_clear(&c);
	cr_assert_eq(resume(&c, "gem", request(id, NULL, 1, 1000)), 0);
	char *word = fmt("--resume=%s", id);
	expect_words(&c.argv, "gemini", word, NULL);
	expect_words(&c.env, "A=1", "COPILOT_ALLOW_ALL=true", "GEMINI_CLI_TRUST_WORKSPACE=true",
		     NULL);
	hqt_cmd_clear(&c);
	free(word);
	/* no id yet: resume spawns */
	cr_expect_eq(resume(&c, "gem", request(NULL, NULL, 0, 1000)), 1);
	hqt_cmd_clear(&c);
	free(id);
}

/* Without {id}, no id is made: the harness picks its own, or none. */
Test(plugins, generic_without_id_placeholder_makes_no_id)
{
	char *id = NULL, *err = NULL;

	load(GENERIC_INI);
	cr_expect_eq(harness_generate_id(harness("aider"), &id, &err), 1, "%s", err);
	cr_expect_null(id);
}

Test(plugins, generic_without_command_is_refused_with_a_reason)
{
	bool said = false;

	load("[harness.broken]\nplugin = generic\nresume_command = x\n"
	     "[harness.badenv]\nplugin = generic\ncommand = y\nenv = NOEQUALS\n"
	     "[harness.up]\nplugin = generic\ncommand = y\nproject_protect = a/../../b\n"
	     "[harness.abs]\nplugin = generic\ncommand = y\nproject_protect = ~/.bashrc\n");
	cr_expect_null(registry_harness(&reg, "broken"));
	cr_expect_null(registry_harness(&reg, "badenv"));
	cr_expect_null(registry_harness(&reg, "up"));
	cr_expect_null(registry_harness(&reg, "abs"));
	for (size_t i = 0; i < reg.warnings.n; i++)
		said |= strstr(reg.warnings.v[i], "[harness.broken]") &&
			strstr(reg.warnings.v[i], "needs 'command'");
	cr_expect(said, "no warning names the missing command");
	said = false;
	for (size_t i = 0; i < reg.warnings.n; i++)
		said |= strstr(reg.warnings.v[i], "[harness.up]") &&
			strstr(reg.warnings.v[i], "project_protect: 'a/../../b'");
	cr_expect(said, "no warning names the bad project_protect");
	cr_expect_eq(reg.warnings.n, 4);
}

/* ---- gemini ---- */

/* The value of name in a built command's environment, or NULL. */
static const char *
env_of(const struct hqt_cmd *c, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < c->env.n; i++)
		if (!strncmp(c->env.v[i], name, n) && c->env.v[i][n] == '=')
			return c->env.v[i] + n + 1;
	return NULL;
}

Test(plugins, gemini_spawn_and_resume_argv)
{
	struct hqt_cmd c;

	unsetenv("GEMINI_CLI_HOME");
	spawn(&c, "gemini", request(ID, NULL, 0, 1000));
	expect_words(&c.argv, "gemini", "--session-id", ID, NULL);
	/* gemini is headless wherever CI=true, even in a terminal */
	cr_expect_str_eq(env_of(&c, "CI"), "false");
	cr_expect_str_eq(env_of(&c, "GITHUB_ACTIONS"), "false");
	hqt_cmd_clear(&c);
	spawn(&c, "gemini", request(ID, "gemini-2.5-pro", 1, 0));
	expect_words(&c.argv, "gemini", "--session-id", ID, "-m", "gemini-2.5-pro", "--yolo",
		     "--skip-trust", NULL);
	hqt_cmd_clear(&c);

	/* No transcript (written at launch): spawn again with the same id. */
	cr_expect_eq(resume(&c, "gemini", request(ID, NULL, 0, 1000)), 1);
	hqt_cmd_clear(&c);
	/* One whose first line names another session is not its. */
	write_file(fmt("%s/.gemini/tmp/project/chats/session-2026-12-04T07-34-%.8s.jsonl", home, ID),
		   "{\"sessionId\":\"0b0e6a3c-0000-4000-8000-000000000000\"}\n", 0600);
	cr_expect_eq(resume(&c, "gemini", request(ID, NULL, 0, 1000)), 1);
	hqt_cmd_clear(&c);
	write_file(fmt("%s/.gemini/tmp/project/chats/session-2026-12-04T07-35-%.8s.jsonl", home, ID),
		   "{\"sessionId\":\"" ID "\",\"kind\":\"main\"}\n", 0600);
	cr_assert_eq(resume(&c, "gemini", request(ID, NULL, 1, 1000)), 0);
	expect_words(&c.argv, "gemini", "--resume", ID, "--yolo", "--skip-trust", NULL);
	hqt_cmd_clear(&c);

	/* an id gemini would not take */
	char *err = spawn_error("gemini", request("a.b", NULL, 0, 1000));
	cr_expect(strstr(err, "session id") != NULL, "%s", err);
	free(err);
}

Test(plugins, gemini_hooks_file_beside_the_plugin_per_launch)
{
	struct hqt_request req = request(ID, NULL, 0, 1000);
	char *want = fmt("%s/gemini-settings.json", getenv("HQT_TEST_PLUGIN_DIR"));
	struct hqt_cmd c;

	req.event_file = "/run/hqt/events/1";
	req.event_command = "/usr/lib/hqt/hqt-event";
	unsetenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH");
	spawn(&c, "gemini", req);
	/* Only where gemini would read it: root's, written by no one else. */
	const char *got = env_of(&c, "GEMINI_CLI_SYSTEM_DEFAULTS_PATH");
	struct stat st;
	if (getuid() == 0 && stat(want, &st) == 0 && st.st_uid == 0 && !(st.st_mode & 022) &&
	    strncmp(want, "/tmp/", 5) != 0)
		cr_expect(got != NULL && strcmp(got, want) == 0, "got %s", got ? got : "(none)");
	else
		cr_expect(got == NULL || strcmp(got, want) == 0);
	hqt_cmd_clear(&c);
	/* A defaults file of the user's stays: no events then. */
	setenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "/etc/gemini-cli/mine.json", 1);
	spawn(&c, "gemini", req);
	cr_expect_null(env_of(&c, "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"));
	hqt_cmd_clear(&c);
	unsetenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH");
	/* the hooks file itself: constant text that runs hqt's helper */
	char *text = slurp(want);
	cr_assert_not_null(text);
	cr_expect(strstr(text, "\"\\\"$HQT_EVENT_COMMAND\\\"\"") != NULL, "%s", text);
	free(text);
	free(want);
}

Test(plugins, gemini_binds)
{
	struct hqt_binds b = { NULL, 0 };
	struct strv flags = STRV_INIT;

	unsetenv("GEMINI_CLI_HOME");
	write_file(fmt("%s/.gemini/hooks/notify.sh", home), "x\n", 0755);
	write_file(fmt("%s/.gemini/settings.json", home),
		   "{\"hooks\": {\"AfterAgent\": [{\"hooks\": [{\"type\": \"command\", "
		   "\"command\": \"~/.gemini/hooks/notify.sh\"}]}]}}\n", 0644);
	harness_binds(harness("gemini"), &b);
	expect_bind(&b, ".gemini", HQT_BIND_STATE);
	expect_bind(&b, ".gemini/settings.json", HQT_BIND_RO);
	expect_bind(&b, ".gemini/oauth_creds.json", HQT_BIND_RO);
	expect_bind(&b, ".gemini/GEMINI.md", HQT_BIND_RO);
	expect_bind(&b, ".gemini/hooks/notify.sh", HQT_BIND_RO);
	expect_bind(&b, ".gemini/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	expect_bind(&b, "GEMINI.md", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	binds_clear(&b);
	harness_skip_flags(harness("gemini"), &flags);
	expect_words(&flags, "--yolo", "--skip-trust", NULL);
	strv_clear(&flags);
}

/* ---- qwen ---- */

Test(plugins, qwen_spawn_resume_env_and_binds)
{
	struct hqt_request req = request(ID, NULL, 0, 1000);
	struct hqt_binds b = { NULL, 0 };
	struct hqt_cmd c;

	unsetenv("QWEN_HOME");
	unsetenv("QWEN_CODE_SYSTEM_DEFAULTS_PATH");
	spawn(&c, "qwen", request(ID, "qwen3-coder", 1, 0));
	expect_words(&c.argv, "qwen", "--session-id", ID, "-m", "qwen3-coder", "--yolo", NULL);
	hqt_cmd_clear(&c);
	/* its hooks: the settings file beside the plugin, as the lowest layer */
	req.event_file = "/run/hqt/events/1";
	req.event_command = "/usr/lib/hqt/hqt-event";
	spawn(&c, "qwen", req);
	char *want = fmt("%s/qwen-settings.json", getenv("HQT_TEST_PLUGIN_DIR"));
	const char *got = env_of(&c, "QWEN_CODE_SYSTEM_DEFAULTS_PATH");
	cr_expect(got != NULL && strcmp(got, want) == 0, "got %s", got ? got : "(none)");
	hqt_cmd_clear(&c);
	free(want);

	/* No transcript before the first prompt: spawn again with the id. */
	cr_expect_eq(resume(&c, "qwen", request(ID, NULL, 0, 1000)), 1);
	hqt_cmd_clear(&c);
	write_file(fmt("%s/.qwen/projects/-x-project/chats/%s.jsonl", home, ID), "{}\n", 0600);
	cr_assert_eq(resume(&c, "qwen", request(ID, NULL, 0, 1000)), 0);
	expect_words(&c.argv, "qwen", "--resume", ID, NULL);
	hqt_cmd_clear(&c);

	harness_binds(harness("qwen"), &b);
	expect_bind(&b, ".qwen", HQT_BIND_STATE);
	expect_bind(&b, ".qwen/settings.json", HQT_BIND_RO);
	expect_bind(&b, ".qwen/QWEN.md", HQT_BIND_RO);
	expect_bind(&b, ".qwen/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	expect_bind(&b, "QWEN.md", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	binds_clear(&b);
}

/* ---- copilot ---- */

Test(plugins, copilot_argv_env_and_binds)
{
	struct hqt_request req = request(ID, NULL, 0, 1000);
	struct hqt_binds b = { NULL, 0 };
	struct hqt_cmd c;

	unsetenv("COPILOT_HOME");
	spawn(&c, "copilot", req);
	expect_words(&c.argv, "copilot", "--session-id", ID, NULL);
	expect_words(&c.env, NULL);
	hqt_cmd_clear(&c);
	/* the same to resume: --session-id resumes an id that exists */
	cr_assert_eq(resume(&c, "copilot", req), 0);
	expect_words(&c.argv, "copilot", "--session-id", ID, NULL);
	hqt_cmd_clear(&c);
	/* sandboxed: COPILOT_ALLOW_ALL there only (the trust box too) */
	req.event_file = "/run/hqt/events/1";
	req.event_command = "/usr/lib/hqt/hqt-event";
	req.sandboxed = 1;
	req.model = "claude-sonnet-4.6";
	spawn(&c, "copilot", req);
	char *hooks = fmt("%s/copilot-hooks", getenv("HQT_TEST_PLUGIN_DIR"));
	expect_words(&c.argv, "copilot", "--session-id", ID, "--plugin-dir", hooks, "--model",
		     "claude-sonnet-4.6", "--yolo", NULL);
	expect_words(&c.env, "COPILOT_ALLOW_ALL=true", NULL);
	hqt_cmd_clear(&c);

	harness_binds(harness("copilot"), &b);
	expect_bind(&b, ".copilot", HQT_BIND_STATE);
	expect_bind(&b, ".cache/copilot", HQT_BIND_STATE);
	expect_bind(&b, ".copilot/settings.json", HQT_BIND_RO);
	expect_bind(&b, hooks, HQT_BIND_RO);
	expect_bind(&b, ".github/copilot-instructions.md", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	expect_bind(&b, ".github/hooks/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	binds_clear(&b);
	free(hooks);
}

/* ---- every plugin ---- */

Test(plugins, hostile_model_stays_one_word)
{
	static const struct { const char *harness, *flag; } all[] = {
		{ "claude", "--model" }, { "codex", "-m" }, { "kiro", "--model" },
		{ "gemini", "-m" }, { "qwen", "-m" }, { "copilot", "--model" }, { "opencode", "-m" },
		{ "aider", "--model" },
	};

	load(GENERIC_INI);
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		struct hqt_cmd c;
		int at;

		spawn(&c, all[i].harness, request(ID, HOSTILE, 0, 1000));
		at = strv_find(&c.argv, all[i].flag);
		cr_assert(at >= 0 && (size_t)at + 1 < c.argv.n, "%s: no model flag",
			  all[i].harness);
		cr_expect_str_eq(c.argv.v[at + 1], HOSTILE, "%s", all[i].harness);
		cr_expect_eq((size_t)at + 2, c.argv.n, "%s", all[i].harness);
		hqt_cmd_clear(&c);

		char *err = spawn_error(all[i].harness, request(ID, "--dangerously-skip-permissions",
								0, 1000));
		cr_expect(strstr(err, "bad model name") != NULL, "%s: %s", all[i].harness, err);
		free(err);
	}
}

/* ---- screens ---- */

static enum hqt_status
status(const char *name, const char *screen)
{
	return harness_parse_status(harness(name), screen, strlen(screen));
}

static const char CLAUDE_WORKING[] =
	"> fix the failing test\n"
	"\n"
	"⏺ I'll read the test first.\n"
	"\n"
	"⏺ Read(tests/unit/test-config.c)\n"
	"  ⎿  Read 120 lines (ctrl+o to expand)\n"
	"\n"
	"✻ Pondering… (12s · ↓ 1.2k tokens · esc to interrupt)\n"
	"\n"
	"╭──────────────────────────────────────────╮\n"
	"│ ❯                                        │\n"
	"╰──────────────────────────────────────────╯\n"
	"  ⏵⏵ accept edits on (shift+tab to cycle)\n";

static const char CLAUDE_SPINNER_ONLY[] =
	"⏺ Running the tests.\n"
	"\n"
	"✶ Brewing… (3s · ↑ 40 tokens)\n"
	"  ⎿  Tip: press ctrl+t to show todos\n"
	"\n"
	"────────────────────────────────────────────\n"
	"❯\xc2\xa0\n"
	"────────────────────────────────────────────\n";

static const char CLAUDE_PERMISSION[] =
	"⏺ Bash(rm -rf build && cmake -S . -B build)\n"
	"\n"
	"╭─────────────────────────────────────────────────────────╮\n"
	"│ Bash command                                            │\n"
	"│                                                         │\n"
	"│   rm -rf build && cmake -S . -B build                   │\n"
	"│   Rebuild from scratch                                  │\n"
	"│                                                         │\n"
	"│ Do you want to proceed?                                 │\n"
	"│ ❯ 1. Yes                                                │\n"
	"│   2. Yes, and don't ask again for rm commands           │\n"
	"│   3. No, and tell Claude what to do differently (esc)   │\n"
	"╰─────────────────────────────────────────────────────────╯\n";

static const char CLAUDE_IDLE[] =
	"⏺ Done: all 12 tests pass.\n"
	"\n"
	"✻ Worked for 1m 12s\n"
	"\n"
	"────────────────────────────────────────────\n"
	"❯\xc2\xa0\n"
	"────────────────────────────────────────────\n"
	"  ? for shortcuts\n"
	"\n"
	"\n";

static const char SHELL[] =
	"$ claude\n"
	"bash: claude: command not found\n"
	"$ \n";

/* Claude Code 2.1.328's startup question, before any hook: needs you. */
static const char CLAUDE_AUTO_MODE[] =
	" Auto mode is now Claude Code's default permission mode.\n"
	"\n"
	" Make auto mode your default permission mode?\n"
	"\n"
	" ❯ 1. Yes, make it my default\n"
	"   2. No, ask me each time\n";

static const char CLAUDE_BYPASS[] =
	" WARNING: Claude Code running in Bypass Permissions mode\n"
	"\n"
	" ❯ 1. No, exit\n"
	"   2. Yes, I accept\n";

Test(plugins, claude_startup_dialogs_need_the_user)
{
	cr_expect_eq(status("claude", CLAUDE_AUTO_MODE), HQT_STATUS_NEEDS_INPUT);
	cr_expect_eq(status("claude", CLAUDE_BYPASS), HQT_STATUS_NEEDS_INPUT);
}

Test(plugins, claude_screens)
{
	cr_expect_eq(status("claude", CLAUDE_WORKING), HQT_STATUS_WORKING);
	cr_expect_eq(status("claude", CLAUDE_SPINNER_ONLY), HQT_STATUS_WORKING);
	/* a permission prompt needs the user; the empty box is a finished turn */
	cr_expect_eq(status("claude", CLAUDE_PERMISSION), HQT_STATUS_NEEDS_INPUT);
	cr_expect_eq(status("claude", CLAUDE_IDLE), HQT_STATUS_WAITING);
	cr_expect_eq(status("claude", SHELL), HQT_STATUS_UNKNOWN);
	cr_expect_eq(status("claude", ""), HQT_STATUS_UNKNOWN);
}

Test(plugins, codex_screens)
{
	static const char working[] =
		"› Add a unit test for the parser\n"
		"\n"
		"• Explored\n"
		"  └ Read parser.c\n"
		"\n"
		"• Working (14s • esc to interrupt)\n"
		"\n"
		"› Ask Codex to do anything\n"
		"  100% context left · ? for shortcuts\n";
	static const char command[] =
		"  Would you like to run the following command?\n"
		"\n"
		"  $ cargo test -p codex-core\n"
		"\n"
		"› 1. Yes, proceed\n"
		"  2. Yes, and don't ask again for this command\n"
		"  3. No, and tell Codex what to do differently (esc)\n"
		"\n"
		"  Press enter to confirm or esc to cancel\n";
	static const char edits[] =
		"  Would you like to make the following edits?\n"
		"\n"
		"  src/parser.c (+3 -1)\n";

	cr_expect_eq(status("codex", working), HQT_STATUS_WORKING);
	cr_expect_eq(status("codex", command), HQT_STATUS_NEEDS_INPUT);
	cr_expect_eq(status("codex", edits), HQT_STATUS_NEEDS_INPUT);
	cr_expect_eq(status("codex", SHELL), HQT_STATUS_UNKNOWN);
}

/* Screens of the real Codex CLI 0.169.0 (capture-pane of e2e runs,
 * tests/e2e): the reply streams with no status line, so only the line
 * above the input box tells a finished turn from a streaming one. */
static const char CODEX_0169_FRESH[] =
	" \n"
	"  >_ OpenAI Codex (v0.169.0)\n"
	"     /work/wt-e2e/build/e2e/tmp/hqt-test-65ZUzy/proj\n"
	" \n"
	"                                                       ⣀⣤⣤⣤⣀⣀\n"
	"                                                    ⣠⣶⣿⣿⣿⣿⣿⣿⣿⣿⣦⣤⣤⣤⣤⣤⣤⡀\n"
	"                                                          ⠈⠙⠛⠿⠿⠿⠿⠛⠉\n"
	" \n"
	"› Ask Codex to do anything\n"
	"                                                                       \n"
	"  e2e-model default · /work/wt-e2e/build/e2e/tmp/hqt-test-65ZUzy/proj\n"
	"  ← for agents · ? for shortcuts\n";
static const char CODEX_0169_IDLE[] =
	"  >_ OpenAI Codex (v0.169.0)\n"
	"     /tmp/e2e-explore/t1/proj\n"
	"\n"
	"› ping1\n"
	"\n"
	"• pong: ping1\n"
	"\n"
	"  Worked for <1s • 19:04\n"
	"\n"
	"\n"
	"› Ask Codex to do anything\n"
	"\n"
	"  e2e-model default · /tmp/e2e-explore/t1/proj\n"
	"  ← for agents · ? for shortcuts                    ⚠ 1 warning · f2 to view\n";
static const char CODEX_0169_THINKING[] =
	"› ping1\n"
	"\n"
	"• pong: ping1\n"
	"\n"
	"  Worked for <1s • 19:04\n"
	"\n"
	"› e2e-slow w3\n"
	"\n"
	"• Working (0s • esc to interrupt)\n"
	"\n"
	"\n"
	"› Ask Codex to do anything\n"
	"\n"
	"  e2e-model default · /tmp/e2e-explore/t1/proj\n"
	"  ← for agents · ? for shortcuts\n";
static const char CODEX_0169_STREAMING[] =
	"• pong: e2e-slow w2\n"
	"\n"
	"  Worked for 6s • 19:04\n"
	"\n"
	"› e2e-slow w3\n"
	"\n"
	"• pong: e2e-slow\n"
	"\n"
	"\n"
	"› Ask Codex to do anything\n"
	"\n"
	"  e2e-model default · /tmp/e2e-explore/t1/proj\n"
	"  ← for agents · ? for shortcuts\n";
static const char CODEX_0169_DONE[] =
	"› e2e-slow w3\n"
	"\n"
	"• pong: e2e-slow w3\n"
	"\n"
	"  Worked for 6s • 19:04\n"
	"\n"
	"\n"
	"› Ask Codex to do anything\n"
	"\n"
	"  e2e-model default · /tmp/e2e-explore/t1/proj\n"
	"  ← for agents · ? for shortcuts\n";

Test(plugins, codex_0169_screens)
{
	cr_expect_eq(status("codex", CODEX_0169_FRESH), HQT_STATUS_WAITING);
	cr_expect_eq(status("codex", CODEX_0169_IDLE), HQT_STATUS_WAITING);
	cr_expect_eq(status("codex", CODEX_0169_THINKING), HQT_STATUS_WORKING);
	/* Streaming: no marker says; pane activity decides. */
	cr_expect_eq(status("codex", CODEX_0169_STREAMING), HQT_STATUS_UNKNOWN);
	cr_expect_eq(status("codex", CODEX_0169_DONE), HQT_STATUS_WAITING);
}

/* Gemini CLI 0.61.0 in an 80-column pane (tests/e2e). */
Test(plugins, gemini_screens)
{
	static const char trust[] =
		" ╭──────────────────────────────────────────────────────────────────────────╮\n"
		" │ Do you trust the files in this folder?                                   │\n"
		" │ ● 1. Trust folder (proj)                                                 │\n"
		" │   2. Trust parent folder (tmp)                                           │\n"
		" │   3. Don't trust                                                         │\n"
		" ╰──────────────────────────────────────────────────────────────────────────╯\n";
	static const char working[] =
		" > e2e-slow s1\n"
		"\n"
		"⠸ Thinking... (esc to cancel, 3s)\n"
		"────────────────────────────────────────────────────────────────────────────────\n"
		" >   Type your message or @path/to/file\n";
	static const char approval[] =
		"│ ? Shell  touch e2e-approved.txt                                          │\n"
		"│ Allow execution of [Shell]?                                              │\n"
		"│ ● 1. Allow once                                                          │\n"
		"│   2. Allow for this session                                              │\n"
		"│   3. No, suggest changes (esc)                                           │\n"
		"╰──────────────────────────────────────────────────────────────────────────╯\n";
	static const char idle[] =
		"✦ pong: hello\n"
		"                                                                ? for shortcuts\n"
		"────────────────────────────────────────────────────────────────────────────────\n"
		" Shift+Tab to accept edits\n"
		" >   Type your message or @path/to/file\n"
		" workspace (/directory)                       sandbox                  /model\n";

	cr_expect_eq(status("gemini", trust), HQT_STATUS_NEEDS_INPUT);
	cr_expect_eq(status("gemini", working), HQT_STATUS_WORKING);
	cr_expect_eq(status("gemini", approval), HQT_STATUS_NEEDS_INPUT);
	cr_expect_eq(status("gemini", idle), HQT_STATUS_WAITING);
	cr_expect_eq(status("gemini", SHELL), HQT_STATUS_UNKNOWN);
}

/* Qwen Code 0.24.4 in an 80-column pane (tests/e2e). */
Test(plugins, qwen_screens)
{
	static const char approval[] =
		"  > e2e-ask\n"
		"  ? Shell touch e2e-approved.txt (Print a marker) ←\n"
		"   Allow execution of: 'touch, expr'?\n"
		"   › 1. Yes, allow once\n"
		"     4. No, suggest changes (esc)\n"
		"  ⠏ Waiting for user confirmation...\n";
	static const char working[] =
		"  > e2e-slow s1\n"
		"  ⠸ Reticulating splines... (1s · esc to cancel)\n"
		"────────────────────────────────────────────────────────────────────────────────\n"
		">   Type your message or @path/to/file\n";
	static const char idle[] =
		"  ◆︎ tool said: E2E_APPROVED_42\n"
		"────────────────────────────────────────────────────────────────────────────────\n"
		">   Type your message or @path/to/file\n"
		"────────────────────────────────────────────────────────────────────────────────\n"
		"  ⏸ Ask permissions (shift + tab to cycle)\n";

	cr_expect_eq(status("qwen", approval), HQT_STATUS_NEEDS_INPUT);
	cr_expect_eq(status("qwen", working), HQT_STATUS_WORKING);
	cr_expect_eq(status("qwen", idle), HQT_STATUS_WAITING);
}

Test(plugins, kiro_screens)
{
	static const char working[] =
		"> summarise the README\n"
		"\n"
		"⠙ Kiro is working (esc to cancel)\n";
	static const char approval[] =
		"🛠️  Using tool: execute_bash\n"
		" ⋮\n"
		" ● I will run the following shell command: make test\n"
		"\n"
		"execute_bash requires approval, press 'y' to approve, 'n' to deny or 't' to trust\n";
	static const char idle[] =
		"> The README describes hqt.\n"
		"\n"
		"ask a question or describe a task ↵\n";

	cr_expect_eq(status("kiro", working), HQT_STATUS_WORKING);
	cr_expect_eq(status("kiro", approval), HQT_STATUS_NEEDS_INPUT);
	cr_expect_eq(status("kiro", idle), HQT_STATUS_WAITING);
	cr_expect_eq(status("kiro", SHELL), HQT_STATUS_UNKNOWN);
}

Test(plugins, markers_overridden_from_the_ini)
{
	load("[harness.claude]\n"
	     "working_markers = Busy*please wait\n"
	     "waiting_markers = Custom question?, =READY\n"
	     "needs_markers =\n"
	     "[harness.codex]\n"
	     "waiting_markers =\n"
	     "needs_markers =\n" GENERIC_INI);
	/* The defaults are replaced, not extended. */
	cr_expect_eq(status("claude", CLAUDE_PERMISSION), HQT_STATUS_UNKNOWN);
	cr_expect_eq(status("claude", CLAUDE_SPINNER_ONLY), HQT_STATUS_UNKNOWN);
	cr_expect_eq(status("claude", "x\nCustom question? [y/n]\n"), HQT_STATUS_WAITING);
	cr_expect_eq(status("claude", "│  READY  │\n"), HQT_STATUS_WAITING);
	cr_expect_eq(status("claude", "NOT READY\n"), HQT_STATUS_UNKNOWN);
	cr_expect_eq(status("claude", "Busy, please wait\nCustom question?\n"),
		     HQT_STATUS_WORKING);
	/* Set to nothing: no waiting or needs markers at all; working ones stay. */
	cr_expect_eq(status("codex", "Would you like to run the following command?\n"),
		     HQT_STATUS_UNKNOWN);
	cr_expect_eq(status("codex", "• Working (1s • esc to interrupt)\n"), HQT_STATUS_WORKING);
	/* generic has only what its section says. */
	cr_expect_eq(status("aider", "Aider is thinking...\n"), HQT_STATUS_WORKING);
	cr_expect_eq(status("aider", "Run shell command? (Y)es/(N)o [Yes]: \n"),
		     HQT_STATUS_WAITING);
	cr_expect_eq(status("plain", "anything\n"), HQT_STATUS_UNKNOWN);
}

/* ---- session-id capture ---- */

static char *
iso(time_t t)
{
	struct tm tm;
	char buf[64];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.123Z", &tm);
	return xstrdup(buf);
}

/* A codex session_meta line; extra is spliced into the payload. */
static char *
meta(const char *id, time_t born, const char *cwd, const char *extra)
{
	char *ts = iso(born);
	char *line = fmt("{\"timestamp\":\"%s\",\"type\":\"session_meta\",\"payload\":{"
			 "\"id\":\"%s\",\"timestamp\":\"%s\",\"cwd\":\"%s\","
			 "\"originator\":\"codex_cli_rs\",\"cli_version\":\"0.80.0\"%s}}\n"
			 "{\"type\":\"response_item\",\"payload\":{}}\n",
			 ts, id, ts, cwd, extra);

	free(ts);
	return line;
}

/* The codex day directory for t, in local time as codex names it. */
static char *
codex_day(time_t t)
{
	struct tm tm;
	char buf[32];

	localtime_r(&t, &tm);
	strftime(buf, sizeof buf, "%Y/%m/%d", &tm);
	return fmt("%s/.codex/sessions/%s", home, buf);
}

static void
put_rollout(const char *name, const char *text, time_t mtime)
{
	char *day = codex_day(time(NULL));
	char *path = fmt("%s/rollout-%s", day, name);

	write_file(path, text, 0600);
	if (mtime)
		set_mtime(path, mtime);
	free(day);
	free(path);
}

static int
capture(const char *name, time_t spawned, char **id)
{
	struct hqt_request req = request(NULL, NULL, 0, 1000);
	char *err = NULL;
	int rc;

	req.spawned_at = spawned;
	rc = harness_capture_id(harness(name), &req, id, &err);
	cr_assert(rc >= 0, "%s", err);
	return rc;
}

/* The first line of a real Codex CLI 0.169.0 rollout (shortened
 * base_instructions): the TUI alone writes source "cli"; behind codex's
 * app-server daemon the same TUI has written "vscode".  Both are the user's. */
static char *
meta_0169(const char *id, time_t born, const char *cwd, const char *source)
{
	char *ts = iso(born);
	char *line = fmt("{\"timestamp\":\"%s\",\"ordinal\":0,\"type\":\"session_meta\",\"payload\":{"
			 "\"account_scoped\":true,\"session_id\":\"%s\",\"id\":\"%s\","
			 "\"timestamp\":\"%s\",\"cwd\":\"%s\",\"runtime_workspace_roots\":[\"%s\"],"
			 "\"originator\":\"codex-tui\",\"cli_version\":\"0.169.0\","
			 "\"source\":\"%s\",\"thread_source\":\"user\",\"model_provider\":\"e2e\","
			 "\"base_instructions\":{\"text\":\"You are a coding agent running in "
			 "the Codex CLI.\"}}}\n",
			 ts, id, id, ts, cwd, cwd, source);

	free(ts);
	return line;
}

Test(plugins, codex_capture_takes_the_0169_tui_whatever_its_source)
{
	time_t now = time(NULL), spawned = now - 120;
	char *id = NULL, *t;

	put_rollout("2026-12-01T19-04-06-01a232fe-251c-7473-b156-71b313b482e6.jsonl",
		    t = meta_0169("01a232fe-251c-7473-b156-71b313b482e6", spawned + 5, project,
				  "vscode"),
		    0);
	free(t);
	cr_assert_eq(capture("codex", spawned, &id), 1);
	cr_expect_str_eq(id, "01a232fe-251c-7473-b156-71b313b482e6");
	free(id);
	id = NULL;
	cr_assert_eq(capture("codex", spawned + 60, &id), 0, "older than the spawn: %s", id);
	put_rollout("2026-12-01T19-06-06-01a232fe-251c-7473-b156-71b313b482e7.jsonl",
		    t = meta_0169("01a232fe-251c-7473-b156-71b313b482e7", spawned + 65, project,
				  "cli"),
		    0);
	free(t);
	cr_assert_eq(capture("codex", spawned + 60, &id), 1);
	cr_expect_str_eq(id, "01a232fe-251c-7473-b156-71b313b482e7");
	free(id);
}

Test(plugins, codex_capture_picks_the_users_session_in_the_project)
{
	time_t now = time(NULL), spawned = now - 120;
	char *big = xmalloc(100 * 1024 + 64), *id = NULL, *t;

	memcpy(big, ",\"instructions\":\"", 17);
	memset(big + 17, 'x', 100 * 1024);
	strcpy(big + 17 + 100 * 1024, "\",\"source\":\"cli\"");

	cr_expect_eq(capture("codex", spawned, &id), 0, "nothing there yet");
	put_rollout("a-sub.jsonl",
		    t = meta("aaaaaaaa-0000-4000-8000-000000000001", spawned + 5, project,
			     ",\"source\":{\"subagent\":{\"thread_spawn\":{\"parent_thread_id\":\"x\"}}}"),
		    0);
	free(t);
	put_rollout("b-fork.jsonl",
		    t = meta("aaaaaaaa-0000-4000-8000-000000000002", spawned + 6, project,
			     ",\"source\":\"cli\",\"forked_from_id\":\"y\""),
		    0);
	free(t);
	put_rollout("c-elsewhere.jsonl",
		    t = meta("aaaaaaaa-0000-4000-8000-000000000003", spawned + 7, "/srv/other",
			     ",\"source\":\"cli\""),
		    0);
	free(t);
	put_rollout("d-exec.jsonl",
		    t = meta("aaaaaaaa-0000-4000-8000-000000000004", spawned + 8, project,
			     ",\"source\":\"exec\""),
		    0);
	free(t);
	put_rollout("e-old.jsonl",
		    t = meta("aaaaaaaa-0000-4000-8000-000000000005", spawned - 3600, project,
			     ",\"source\":\"cli\""),
		    spawned - 3600);
	free(t);
	/* Started before the spawn but still being written. */
	put_rollout("f-running.jsonl",
		    t = meta("aaaaaaaa-0000-4000-8000-000000000006", spawned - 600, project,
			     ",\"source\":\"cli\""),
		    0);
	free(t);
	put_rollout("g-not-a-rollout.txt",
		    t = meta("aaaaaaaa-0000-4000-8000-000000000007", spawned + 9, project,
			     ",\"source\":\"cli\""),
		    0);
	free(t);
	cr_expect_eq(capture("codex", spawned, &id), 0, "got %s", id);

	put_rollout("h-later.jsonl",
		    t = meta("aaaaaaaa-0000-4000-8000-000000000008", spawned + 40, project,
			     ",\"source\":\"cli\""),
		    0);
	free(t);
	put_rollout("i-ours.jsonl",
		    t = meta("aaaaaaaa-0000-4000-8000-000000000009", spawned + 20, project, big),
		    0);
	cr_assert_gt(strchr(t, '\n') - t, 64 * 1024);
	free(t);
	cr_assert_eq(capture("codex", spawned, &id), 1);
	cr_expect_str_eq(id, "aaaaaaaa-0000-4000-8000-000000000009");
	free(id);
	free(big);
}

Test(plugins, codex_capture_reads_zstd_rollouts)
{
	time_t spawned = time(NULL) - 30;
	char *big = xmalloc(300 * 1024 + 64), *line, *day = codex_day(time(NULL)), *id = NULL;
	char *path = fmt("%s/rollout-z.jsonl.zst", day);
	char *garbage = fmt("%s/rollout-broken.jsonl.zst", day);
	char *logfile = fmt("%s/hqt.log", root), *log;
	size_t bound, n;
	void *z;
	int fd;

	/* Larger than one zstd block, so the first line spans several. */
	memcpy(big, ",\"instructions\":\"", 17);
	for (size_t i = 0; i < 300 * 1024; i++)
		big[17 + i] = "abcdefghijklmnopqrstuvwxyz"[(i * 7919) % 26];
	strcpy(big + 17 + 300 * 1024, "\",\"source\":\"cli\"");
	line = meta("bbbbbbbb-0000-4000-8000-00000000000b", spawned + 3, project, big);
	bound = ZSTD_compressBound(strlen(line));
	z = xmalloc(bound);
	n = ZSTD_compress(z, bound, line, strlen(line), 3);
	cr_assert(!ZSTD_isError(n));
	write_file(path, "", 0600);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	cr_assert(fd >= 0 && write(fd, z, n) == (ssize_t)n);
	close(fd);
	write_file(garbage, "not zstd at all\n", 0600);
	setenv("HQT_LOG", logfile, 1);

	cr_assert_eq(capture("codex", spawned, &id), 1);
	cr_expect_str_eq(id, "bbbbbbbb-0000-4000-8000-00000000000b");
	/* The broken one is skipped, and the log says which and why. */
	log = slurp(logfile);
	cr_assert_not_null(log);
	cr_expect(strstr(log, "codex: skipping ") && strstr(log, garbage), "%s", log);
	free(log);
	free(logfile);
	free(id);
	free(big);
	free(line);
	free(z);
	free(day);
	free(path);
	free(garbage);
}

Test(plugins, kiro_capture)
{
	time_t spawned = time(NULL) - 30;
	char *dir = fmt("%s/.kiro/sessions/cli", home), *p, *json, *id = NULL;

	cr_expect_eq(capture("kiro", spawned, &id), 0);
	p = fmt("%s/11111111-1111-4111-8111-111111111111.json", dir);
	write_file(p, "{\"cwd\":\"/srv/other\",\"history\":[]}", 0600);
	free(p);
	p = fmt("%s/22222222-2222-4222-8222-222222222222.json", dir);
	json = fmt("{\"cwd\":\"%s\"}", project);
	write_file(p, json, 0600);
	set_mtime(p, spawned - 3600);
	free(json);
	free(p);
	p = fmt("%s/33333333-3333-4333-8333-333333333333.json", dir);
	json = fmt("{\"cwd\":\"%s\",\"session_id\":\"--trust-all-tools\"}", project);
	write_file(p, json, 0600);
	free(json);
	free(p);
	p = fmt("%s/notes.txt", dir);
	write_file(p, "{}", 0600);
	free(p);
	cr_expect_eq(capture("kiro", spawned, &id), 0, "got %s", id);

	json = fmt("{\"cwd\":\"%s\",\"history\":[{\"user\":\"hi\"}]}", project);
	p = fmt("%s/44444444-4444-4444-8444-444444444444.json", dir);
	write_file(p, json, 0600);
	free(p);
	cr_assert_eq(capture("kiro", spawned, &id), 1);
	cr_expect_str_eq(id, "44444444-4444-4444-8444-444444444444");
	free(id);
	free(json);
	free(dir);
}

Test(plugins, kiro_capture_prefers_the_recorded_id)
{
	char *p = fmt("%s/.kiro/sessions/cli/55555555-5555-4555-8555-555555555555.json", home);
	char *json = fmt("{\"session_id\":\"66666666-6666-4666-8666-666666666666\",\"cwd\":\"%s\"}",
			 project);
	char *id = NULL;

	write_file(p, json, 0600);
	cr_assert_eq(capture("kiro", time(NULL) - 30, &id), 1);
	cr_expect_str_eq(id, "66666666-6666-4666-8666-666666666666");
	free(id);
	free(json);
	free(p);
}

/* ---- opencode ---- */

/* Its id (ses_...) from its own session.created in the session's event
 * file, written by hqt's bridge: of the project's directory, since the
 * spawn, the first one. */
Test(plugins, opencode_captures_its_id_from_its_own_event)
{
	struct hqt_request req = request(NULL, NULL, 0, 1000);
	char *events = fmt("%s/events", root), *id = NULL, *err = NULL;
	time_t now = time(NULL);
	char *text = fmt("{\"hqt_at\":1,\"type\":\"session.status\",\"session_id\":\"ses_x\","
			 "\"status\":\"busy\"}\n"
			 "{\"hqt_at\":1,\"type\":\"session.created\",\"session_id\":\"ses_old\","
			 "\"directory\":\"%s\",\"created\":%lld}\n"
			 "{\"hqt_at\":1,\"type\":\"session.created\",\"session_id\":\"ses_other\","
			 "\"directory\":\"/elsewhere\",\"created\":%lld}\n"
			 "{\"hqt_at\":1,\"type\":\"session.created\",\"session_id\":\"ses_dbfe91bbdffeq\","
			 "\"directory\":\"%s\",\"created\":%lld}\n"
			 "{\"hqt_at\":1,\"type\":\"session.created\",\"session_id\":\"ses_later\","
			 "\"directory\":\"%s\",\"created\":%lld}\n",
			 project, (long long)(now - 3600) * 1000, (long long)now * 1000, project,
			 (long long)now * 1000, project, (long long)(now + 5) * 1000);

	req.spawned_at = now - 10;
	/* no event file: not yet */
	cr_assert_eq(harness_capture_id(harness("opencode"), &req, &id, &err), 0, "%s", err);
	write_file(events, text, 0600);
	req.event_file = events;
	cr_assert_eq(harness_capture_id(harness("opencode"), &req, &id, &err), 1, "%s", err);
	cr_expect_str_eq(id, "ses_dbfe91bbdffeq");
	free(id);
	free(text);
	free(events);
}

Test(plugins, opencode_argv_and_its_bridge_per_launch)
{
	struct hqt_request req = request(NULL, "e2e/e2e-model", 1, 1000);
	struct hqt_binds b = { NULL, 0 };
	struct hqt_cmd c;

	unsetenv("OPENCODE_CONFIG_CONTENT");
	spawn(&c, "opencode", req);
	expect_words(&c.argv, "opencode", "-m", "e2e/e2e-model", "--auto", NULL);
	expect_words(&c.env, "OPENCODE_DISABLE_PROJECT_CONFIG=1", NULL);
	hqt_cmd_clear(&c);
	/* nothing to resume before its id is known */
	cr_expect_eq(resume(&c, "opencode", request(NULL, NULL, 0, 1000)), 1);
	hqt_cmd_clear(&c);
	cr_assert_eq(resume(&c, "opencode", request("ses_dbfe91bbdffeq", NULL, 0, 1000)), 0);
	expect_words(&c.argv, "opencode", "-s", "ses_dbfe91bbdffeq", NULL);
	hqt_cmd_clear(&c);

	/* the bridge, added to the user's own config content */
	setenv("OPENCODE_CONFIG_CONTENT", "{\"plugin\":[\"mine\"],\"theme\":\"x\"}", 1);
	req = request(NULL, NULL, 0, 1000);
	req.event_file = "/run/hqt/events/1";
	req.event_command = "/usr/lib/hqt/hqt-event";
	spawn(&c, "opencode", req);
	const char *got = env_of(&c, "OPENCODE_CONFIG_CONTENT");
	char *want = fmt("{\"plugin\":[\"mine\",\"file://%s/hqt-opencode.js\"],\"theme\":\"x\"}",
			 getenv("HQT_TEST_PLUGIN_DIR"));
	cr_expect(got != NULL && strcmp(got, want) == 0, "got %s", got ? got : "(none)");
	free(want);
	hqt_cmd_clear(&c);
	unsetenv("OPENCODE_CONFIG_CONTENT");

	harness_binds(harness("opencode"), &b);
	expect_bind(&b, ".config/opencode", HQT_BIND_STATE);
	expect_bind(&b, ".local/share/opencode", HQT_BIND_STATE);
	expect_bind(&b, ".config/opencode/opencode.json", HQT_BIND_RO);
	expect_bind(&b, ".local/share/opencode/auth.json", HQT_BIND_RO);
	expect_bind(&b, ".opencode/", HQT_BIND_PROJECT | HQT_BIND_PROTECT);
	binds_clear(&b);
}
