/* e2e-net.c: the real Claude Code and Codex CLIs (tests/e2e/versions) in
 * hqt's sandbox with `--net allow` (the harness's own hosts, "+"), their API
 * host the stand-in model server over HTTPS in the tests' network world
 * (tests/support/networld.h; root only): a turn completes through the
 * session's proxy, the stand-in saw it come from the host's side of the
 * world, and the proxy refused nothing the turn needed. */
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
 * (NETWORLD_SERVER): every host of the two "+" lists maps to it, so what
 * a harness asks of any of them reaches the stand-in and is logged. */
#define API_ADDR "198.18.0.2"
static const char PLUS_HOSTS[] = "api.anthropic.com platform.claude.com claude.ai "
				 "api.openai.com auth.openai.com chatgpt.com";

/* The keys and the test CA pass into the sandbox by name; no base URL:
 * claude talks to https://api.anthropic.com as it does by default. */
static const char INI[] =
	"[sandbox]\n"
	"env = ANTHROPIC_API_KEY, OPENAI_API_KEY, DISABLE_AUTOUPDATER, "
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, NODE_EXTRA_CA_CERTS, SSL_CERT_FILE\n";

static pid_t
spawn_in_world(void *arg, const char *const *argv, const char *out)
{
	return networld_spawn(arg, API_ADDR, argv, out);
}

/* The world (or the test skipped, saying what it lacks), the stand-in in
 * it as the "+" hosts, the test user pointed at it. */
static void
enter(void)
{
	char *crt, *key, *san, *line, *ca;

	networld_enter(&w);
	char *squid = find_in_path("squid", "/usr/sbin:/usr/local/sbin:/usr/bin:/bin");
	if (squid == NULL)
		cr_skip_test("net = allow needs squid (apt-get install squid)");
	free(squid);

	san = strdup("DNS:");
	for (const char *p = PLUS_HOSTS; *p;) {
		size_t n = strcspn(p, " ");
		char *more = fmt("%s%.*s%s", san, (int)n, p, p[n] ? ", DNS:" : "");
		free(san);
		san = more;
		p += n + (p[n] != '\0');
	}
	networld_issue(&w, "api", san, &crt, &key);
	line = fmt(API_ADDR " %s", PLUS_HOSTS);
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
	tenv_put(&e.te, "ANTHROPIC_BASE_URL", NULL);
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

/* A turn of harness (claude, codex) in its sandbox with --net allow:
 * it starts, the stand-in's reply to ping-net shows, the stand-in got
 * `api_path` at api_host from the host's side of the world (the proxy),
 * and the proxy refused no host of the "+" lists (what else it refused is
 * logged: hosts the turn did without). */
static void
turn(const char *harness, const char *banner, const char *api_host, const char *api_path)
{
	long id = run_new(&e.te, "p", harness, "--sandbox", "--net", "allow", NULL);
	char *want, *seen, *denied;

	e2e_wait_screen(&e, id, banner, 30000);
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
	/* nothing of the "+" lists refused (after its names, squid checks
	 * the address: the world's is in 198.18.0.0/15, which it lets by) */
	char *lines = fmt("\n%s", denied);
	for (const char *p = PLUS_HOSTS; *p;) {
		size_t k = strcspn(p, " ");
		want = fmt("\n%.*s:", (int)k, p);
		cr_expect(strstr(lines, want) == NULL, "the proxy refused %.*s:\n%s", (int)k, p,
			  denied);
		free(want);
		p += k + (p[k] != '\0');
	}
	free(lines);
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

Test(net, claude_completes_a_turn_through_the_proxy)
{
	enter();
	turn("claude", "Claude Code v", "api.anthropic.com", "/v1/messages?beta=true");
}

Test(net, codex_completes_a_turn_through_the_proxy)
{
	enter();
	turn("codex", "OpenAI Codex (v", "api.openai.com", "/v1/responses");
}
