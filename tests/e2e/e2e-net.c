/* e2e-net.c: the real harness CLIs (tests/e2e/versions: Claude Code, Codex,
 * Gemini CLI, Qwen Code, Copilot CLI, opencode) in hqt's sandbox with
 * `--net allow` (the harness's own hosts, "+"), their API hosts the stand-in
 * model server over HTTPS in the tests' network world
 * (tests/support/networld.h; root only), each CLI at its own default host
 * where it has one: a turn completes through the session's proxy, the
 * stand-in saw every request come from the host's side of the world, and
 * the proxy refused no host of the harness's list (what else it refused,
 * the hosts the turn did without, is logged). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <jansson.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e.h"
#include "networld.h"
#include "process.h"

static struct e2e e;
static struct networld w;

/* The stand-in's address in the world, beside the world's own stand-ins
 * (NETWORLD_SERVER): every host of the "+" lists maps to it, so what a
 * harness asks of any of them reaches the stand-in and is logged.
 * copilot's "*.githubcopilot.com" maps by the names its API has. */
#define API_ADDR "198.18.0.2"
static const char MAPPED[] =
	"api.anthropic.com platform.claude.com claude.ai "
	"api.openai.com auth.openai.com chatgpt.com "
	"generativelanguage.googleapis.com cloudcode-pa.googleapis.com oauth2.googleapis.com "
	"coding.dashscope.aliyuncs.com coding-intl.dashscope.aliyuncs.com "
	"token-plan.cn-beijing.maas.aliyuncs.com token-plan.ap-southeast-1.maas.aliyuncs.com "
	"dashscope.aliyuncs.com dashscope-intl.aliyuncs.com dashscope-us.aliyuncs.com "
	"cn-hongkong.dashscope.aliyuncs.com "
	"api.github.com github.com api.githubcopilot.com api.individual.githubcopilot.com "
	"api.business.githubcopilot.com api.enterprise.githubcopilot.com "
	"telemetry.individual.githubcopilot.com proxy.individual.githubcopilot.com "
	"origin-tracker.individual.githubcopilot.com "
	"opencode.ai models.opencode.ai";

/* Each harness's "+" (net_allow in its plugin), as the proxy gets it. */
#ifndef E2E_NET_MORE
static const char CLAUDE_PLUS[] = "api.anthropic.com platform.claude.com claude.ai";
static const char CODEX_PLUS[] = "api.openai.com auth.openai.com chatgpt.com";
#else
static const char GEMINI_PLUS[] = "generativelanguage.googleapis.com cloudcode-pa.googleapis.com "
				  "oauth2.googleapis.com";
static const char QWEN_PLUS[] =
	"coding.dashscope.aliyuncs.com coding-intl.dashscope.aliyuncs.com "
	"token-plan.cn-beijing.maas.aliyuncs.com token-plan.ap-southeast-1.maas.aliyuncs.com "
	"dashscope.aliyuncs.com dashscope-intl.aliyuncs.com dashscope-us.aliyuncs.com "
	"cn-hongkong.dashscope.aliyuncs.com";
static const char COPILOT_PLUS[] = "api.github.com github.com *.githubcopilot.com";
static const char OPENCODE_PLUS[] = "opencode.ai models.opencode.ai";
#endif

/* The keys and the test CA pass into the sandbox by name; no base URL
 * but where a test sets one (qwen): each CLI talks to its default host. */
static const char INI[] =
	"[sandbox]\n"
	"env = ANTHROPIC_API_KEY, OPENAI_API_KEY, DISABLE_AUTOUPDATER, "
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, "
	"GEMINI_API_KEY, OPENAI_BASE_URL, COPILOT_GITHUB_TOKEN, COPILOT_MODEL, "
	"OPENCODE_API_KEY\n";

static pid_t
spawn_in_world(void *arg, const char *const *argv, const char *out)
{
	return networld_spawn(arg, API_ADDR, argv, out);
}

/* The world (or the test skipped, saying what it lacks), the stand-in in
 * it as the "+" hosts, the test user pointed at it: no base URL of the
 * e2e set-up left (each test says where its harness goes). */
static void
enter(void)
{
	char *crt, *key, *san, *line, *ca;

	networld_enter(&w);
	char *squid = find_in_path("squid", "/usr/sbin:/usr/local/sbin:/usr/bin:/bin");
	if (squid == NULL)
		cr_skip_test("net = allow needs squid (apt-get install squid)");
	free(squid);

	san = strdup("DNS:*.githubcopilot.com, DNS:");
	for (const char *p = MAPPED; *p;) {
		size_t n = strcspn(p, " ");
		char *more = fmt("%s%.*s%s", san, (int)n, p, p[n] ? ", DNS:" : "");
		free(san);
		san = more;
		p += n + (p[n] != '\0');
	}
	networld_issue(&w, "api", san, &crt, &key);
	line = fmt(API_ADDR " %s", MAPPED);
	networld_map(&w, line);

	struct e2e_server srv = { spawn_in_world, &w, API_ADDR ":443", crt, key };
	e2e_init_server(&e, E2E_CODEX_GLOBAL, INI, &srv);

	/* The CA where the sandbox sees it: the project is bound in. */
	char *text = slurp(w.ca);
	cr_assert_not_null(text);
	ca = fmt("%s/.e2e-test-ca.pem", e.proj);
	write_file(ca, text, 0644);
	tenv_put(&e.te, "NODE_EXTRA_CA_CERTS", ca);
	tenv_put(&e.te, "SSL_CERT_FILE", ca);
	static const char *const base_urls[] = {
		"ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "OPENAI_BASE_URL",
		"COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_TYPE", "COPILOT_PROVIDER_API_KEY",
		"COPILOT_PROVIDER_WIRE_MODEL", "COPILOT_OFFLINE", NULL,
	};
	for (const char *const *v = base_urls; *v; v++)
		tenv_put(&e.te, *v, NULL);
	e2e_codex_config(&e, "https://api.openai.com/v1");
	free(text);
	free(ca);
	free(line);
	free(san);
	free(crt);
	free(key);
}

static void
teardown(void)
{
	if (e.cache != NULL)
		e2e_fini(&e);
	if (w.dir != NULL)
		networld_free(&w);
}

TestSuite(net, .fini = teardown, .timeout = 240);

/* What the stand-in was asked, one "METHOD PATH host=HOST from PEER" a
 * line (caller frees). */
static char *
requests(void)
{
	char *log = slurp(e.log), *out = strdup("");

	for (char *l = log; l != NULL && *l;) {
		char *nl = strchr(l, '\n');
		if (nl != NULL)
			*nl = '\0';
		if (strncmp(l, "== ", 3) == 0) {
			char method[16], path[512], from[64], host[256] = "?";
			/* "== HH:MM:SS METHOD PATH from PEER", then the headers */
			if (sscanf(l, "== %*s %15s %511s from %63s", method, path, from) == 3) {
				for (char *h = nl ? nl + 1 : NULL; h != NULL && *h && *h != '\n';) {
					char *hn = strchr(h, '\n');
					if (strncasecmp(h, "Host: ", 6) == 0)
						snprintf(host, sizeof host, "%.*s",
							 (int)(hn ? hn - h - 6
								  : (long)strlen(h + 6)),
							 h + 6);
					h = hn ? hn + 1 : NULL;
				}
				char *more = fmt("%s%s %s host=%s from %s\n", out, method, path,
						 host, from);
				free(out);
				out = more;
			}
		}
		l = nl ? nl + 1 : NULL;
	}
	free(log);
	return out;
}

/* The hosts the session's proxy refused (`hqt show --json`'s net_denied),
 * one a line; and that the session runs with net = allow and its list is
 * "+" (stored as given, expanded when the session starts). */
static char *
denied_and_check(long id)
{
	char n[32];
	snprintf(n, sizeof n, "%ld", id);
	json_t *o = run_show(&e.te, n), *d = json_object_get(o, "net_denied");
	char *sb = json_dumps(json_object_get(o, "sandbox"), JSON_COMPACT), *out = strdup("");
	size_t i;
	json_t *v;

	cr_expect(sb != NULL && strstr(sb, "\"net\":false") != NULL &&
			  strstr(sb, "\"net_allow\":[\"+\"]") != NULL,
		  "session %ld is not net = allow:+: %s", id, sb ? sb : "");
	cr_expect(json_is_array(d), "hqt show --json has no net_denied");
	json_array_foreach(d, i, v)
	{
		char *more = fmt("%s%s\n", out, json_string_value(v));
		free(out);
		out = more;
	}
	free(sb);
	json_decref(o);
	return out;
}

/* Whether host is one of plus (words; "*.example.com" any name under
 * example.com, as squid's ".example.com"). */
static bool
listed(const char *host, size_t len, const char *plus)
{
	for (const char *p = plus; *p;) {
		size_t k = strcspn(p, " ");

		if (k > 2 && p[0] == '*' && p[1] == '.') {
			if (len > k - 1 && strncmp(host + len - (k - 1), p + 1, k - 1) == 0)
				return true;
		} else if (k == len && strncmp(host, p, k) == 0)
			return true;
		p += k + (p[k] != '\0');
	}
	return false;
}

/* A turn of harness in its sandbox with --net allow: it starts (banner on
 * screen), the stand-in's reply to ping-net shows, the stand-in got
 * `api_path` at api_host from the host's side of the world (the proxy),
 * and the proxy refused no host of the harness's "+" list, plus (what else
 * it refused is logged: hosts the turn did without). */
static void
turn(const char *harness, const char *banner, const char *plus, const char *api_host,
     const char *api_path)
{
	long id = run_new(&e.te, "p", harness, "--sandbox", "--net", "allow", NULL);
	char *want, *seen, *denied;

	e2e_wait_screen(&e, id, banner, 60000);
	e2e_wait_status(&e, id, "waiting", 30000);
	e2e_send(&e, id, "ping-net");
	e2e_wait_screen(&e, id, "pong: ping-net", 60000);
	e2e_wait_status(&e, id, "waiting", 15000);

	seen = requests();
	denied = denied_and_check(id);
	cr_log_info("%s: the stand-in saw:\n%s%s: the proxy refused:\n%s", harness, seen, harness,
		    denied[0] ? denied : "(nothing)\n");
	want = fmt("POST %s host=%s from " NETWORLD_OWN "\n", api_path, api_host);
	cr_expect(strstr(seen, want) != NULL, "the stand-in never saw %s; it saw:\n%s", want, seen);
	free(want);
	/* nothing of the "+" list refused (after its names, squid checks
	 * the address: the world's is in 198.18.0.0/15, which it lets by);
	 * a line is "HOST:PORT" */
	for (char *l = denied; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0')) {
		size_t k = strcspn(l, ":\n");
		cr_expect(!listed(l, k, plus), "the proxy refused %.*s of %s's list:\n%s", (int)k,
			  l, harness, denied);
	}
	/* every request came through the proxy, none from elsewhere */
	for (char *l = seen; *l; l = strchr(l, '\n') + 1)
		cr_expect(strncmp(strstr(l, " from ") + 6, NETWORLD_OWN "\n",
				  strlen(NETWORLD_OWN) + 1) == 0,
			  "a request not from the proxy: %.*s", (int)strcspn(l, "\n"), l);

	char n[32];
	snprintf(n, sizeof n, "%ld", id);
	run_ok(&e.te, "kill", n, NULL);
	free(seen);
	free(denied);
}

/* Built twice (tests/CMakeLists.txt): e2e-net runs claude and codex,
 * e2e-net-more (E2E_NET_MORE) the four later CLIs, which ./bootstrap test
 * runs in one pass only. */
#ifndef E2E_NET_MORE
Test(net, claude_completes_a_turn_through_the_proxy)
{
	enter();
	turn("claude", "Claude Code v", CLAUDE_PLUS, "api.anthropic.com", "/v1/messages?beta=true");
}

Test(net, codex_completes_a_turn_through_the_proxy)
{
	enter();
	turn("codex", "OpenAI Codex (v", CODEX_PLUS, "api.openai.com", "/v1/responses");
}

#else

/* gemini with an API key and no GOOGLE_GEMINI_BASE_URL: its default, the
 * Gemini API at https://generativelanguage.googleapis.com.  Its usage
 * statistics and update check on, as a user has them: the proxy refuses
 * their hosts, and the turn does without. */
Test(net, gemini_completes_a_turn_through_the_proxy)
{
	enter();
	char *path = fmt("%s/.gemini/settings.json", e.te.home);
	write_file(path,
		   "{\"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n"
		   " \"model\": {\"name\": \"e2e-model\"}}\n",
		   0600);
	free(path);
	turn("gemini", "Type your message or @path/to/file", GEMINI_PLUS,
	     "generativelanguage.googleapis.com",
	     "/v1beta/models/e2e-model:streamGenerateContent?alt=sse");
}

/* qwen with `openai` auth has no host of its own: it goes where
 * OPENAI_BASE_URL says (unset: api.openai.com, which its list lacks), here
 * Model Studio's Coding Plan, international, as qwen's /auth sets it up
 * (https://coding-intl.dashscope.aliyuncs.com/v1).  Usage statistics and
 * the update check on, as for gemini. */
Test(net, qwen_completes_a_turn_through_the_proxy)
{
	enter();
	tenv_put(&e.te, "OPENAI_BASE_URL", "https://coding-intl.dashscope.aliyuncs.com/v1");
	char *path = fmt("%s/.qwen/settings.json", e.te.home);
	write_file(path,
		   "{\"security\": {\"auth\": {\"selectedType\": \"openai\"}},\n"
		   " \"model\": {\"name\": \"e2e-model\"},\n"
		   " \"tools\": {\"approvalMode\": \"default\"}}\n",
		   0600);
	free(path);
	tenv_put(&e.te, "QWEN_USAGE_STATISTICS_ENABLED", NULL);
	turn("qwen", "Type your message or @path/to/file", QWEN_PLUS,
	     "coding-intl.dashscope.aliyuncs.com", "/v1/chat/completions");
}

/* copilot signed in (a GitHub token, as `copilot login` or GH_TOKEN gives
 * it), no BYOK provider: GitHub's API and Copilot's own. */
Test(net, copilot_completes_a_turn_through_the_proxy)
{
	enter();
	tenv_put(&e.te, "COPILOT_GITHUB_TOKEN", "gho_e2eTestToken0123456789abcdefghijklmn");
	turn("copilot", "· / commands", COPILOT_PLUS, "api.individual.githubcopilot.com",
	     "/chat/completions");
}

/* opencode with its own gateway, OpenCode Zen (the provider "opencode" of
 * its bundled catalogue: https://opencode.ai/zen/v1, OpenAI-compatible;
 * glm-5.3-flash takes no other SDK), and a key of it; no other provider's
 * key (opencode falls back to one it finds). */
Test(net, opencode_completes_a_turn_through_the_proxy)
{
	enter();
	char *path = fmt("%s/.config/opencode/opencode.json", e.te.home);
	write_file(path, "{\"model\": \"opencode/glm-5.3-flash\"}\n", 0600);
	free(path);
	tenv_put(&e.te, "OPENCODE_API_KEY", "sk-e2e-opencode-key");
	tenv_put(&e.te, "ANTHROPIC_API_KEY", NULL);
	tenv_put(&e.te, "OPENAI_API_KEY", NULL);
	/* as a user has it: the catalogue fetched (models.opencode.ai), its
	 * update check and the rest on (none of the e2e set-up's switches) */
	static const char *const oc_off[] = {
		"OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_AUTOUPDATE",
		"OPENCODE_DISABLE_SHARE", "OPENCODE_DISABLE_DEFAULT_PLUGINS",
		"OPENCODE_DISABLE_LSP_DOWNLOAD", NULL,
	};
	for (const char *const *v = oc_off; *v; v++)
		tenv_put(&e.te, *v, NULL);
	turn("opencode", "ctrl+p commands", OPENCODE_PLUS, "opencode.ai",
	     "/zen/v1/chat/completions");
}
#endif
