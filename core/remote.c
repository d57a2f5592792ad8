/* remote.c: hqt on other machines over OpenSSH (remote.h).  No daemon and
 * no protocol of hqt's own: the remote hqt's own verbs, over the user's
 * own ssh, one connection per host shared through ControlMaster. */
#include "remote.h"
#include "text.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* How long an idle shared connection stays up after the last verb. */
#define CONTROL_PERSIST "600"
/* ssh makes ControlPath plus ".XXXXXXXXXXXXXXXX" before it renames it;
 * %C is 40 hex digits. */
#define CONTROL_NAME_LEN (1 + 40 + 17)

bool
remote_target_valid(const char *target)
{
	if (target == NULL || *target == '\0' || *target == '-' || strlen(target) > 1024)
		return false;
	for (const char *p = target; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return false;
	return true;
}

/*
 * The directory of the shared connections' sockets: <runtime>/ssh (0700),
 * or, when that path is too long for a socket name, /tmp/hqt-ssh-<uid>
 * checked ours and private.  NULL when neither can be had.
 */
static char *
control_dir(void)
{
	char *rt = hqt_runtime_dir(true), *dir = NULL;
	struct sockaddr_un sa;

	if (rt != NULL) {
		dir = xasprintf("%s/ssh", rt);
		free(rt);
		if (strlen(dir) + CONTROL_NAME_LEN < sizeof sa.sun_path && make_private_dir(dir))
			return dir;
		free(dir);
	}
	dir = xasprintf("/tmp/hqt-ssh-%u", (unsigned)getuid());
	if (make_private_dir(dir))
		return dir;
	free(dir);
	return NULL;
}

/* One word for a POSIX shell, always single-quoted (an empty word, a
 * '~' or a '*' stays what it is). */
static char *
quote(const char *s)
{
	size_t n = 2;
	char *out, *o;

	for (const char *p = s; *p != '\0'; p++)
		n += *p == '\'' ? 4 : 1;
	o = out = xmalloc(n + 1);
	*o++ = '\'';
	for (; *s != '\0'; s++) {
		if (*s == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *s;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

int
remote_argv(const struct remote *r, char *const args[], bool tty, struct strv *out,
	    char **err)
{
	char *ssh = find_in_path("ssh", NULL), *dir, *line;
	struct strv words = STRV_INIT;

	if (ssh == NULL) {
		set_err(err, "ssh is not installed (sudo apt-get install openssh-client)");
		return -1;
	}
	if ((dir = control_dir()) == NULL) {
		set_err(err, "no private directory for ssh's shared connections");
		free(ssh);
		return -1;
	}
	strv_take(out, ssh);
	strv_push(out, tty ? "-t" : "-T");
	strv_push(out, "-o");
	strv_push(out, "BatchMode=yes");
	strv_push(out, "-o");
	strv_push(out, "ControlMaster=auto");
	strv_push(out, "-o");
	strv_pushf(out, "ControlPath=%s/%%C", dir);
	strv_push(out, "-o");
	strv_push(out, "ControlPersist=" CONTROL_PERSIST);
	strv_push(out, "-o");
	strv_push(out, "ConnectTimeout=10");
	strv_push(out, "-o");
	strv_push(out, "ServerAliveInterval=15");
	strv_push(out, "--");
	strv_push(out, r->target);
	/* The command as the user wrote it (shell words), each argument one
	 * quoted word after it: ssh sends one line to the remote shell. */
	strv_push(&words, r->command);
	for (; args != NULL && *args != NULL; args++)
		strv_take(&words, quote(*args));
	line = strv_join(&words, " ");
	strv_take(out, line);
	strv_clear(&words);
	free(dir);
	return 0;
}

void
remote_close(const struct remote *r)
{
	char *ssh = find_in_path("ssh", NULL), *dir = control_dir();
	struct spawn_opts o = { .timeout_ms = 5000 };
	struct spawn_result res;
	struct strv argv = STRV_INIT;
	char *err = NULL;

	if (ssh != NULL && dir != NULL) {
		strv_take(&argv, ssh);
		ssh = NULL;
		strv_push(&argv, "-o");
		strv_push(&argv, "BatchMode=yes");
		strv_push(&argv, "-o");
		strv_pushf(&argv, "ControlPath=%s/%%C", dir);
		strv_push(&argv, "-O");
		strv_push(&argv, "exit");
		strv_push(&argv, "--");
		strv_push(&argv, r->target);
		/* None up is fine: ssh says so, and that is all. */
		if (spawn_capture_opts(strv_v(&argv), NULL, &o, &res, &err) == 0)
			spawn_result_free(&res);
		free(err);
	}
	strv_clear(&argv);
	free(ssh);
	free(dir);
}

int
remote_run(const struct remote *r, char *const args[], int timeout_ms, struct spawn_result *res,
	   char **err)
{
	struct strv argv = STRV_INIT;
	struct spawn_opts o = { .timeout_ms = timeout_ms, .max_output = REMOTE_OUTPUT_MAX };
	int rc;

	memset(res, 0, sizeof *res);
	if (remote_argv(r, args, false, &argv, err) != 0)
		return -1;
	rc = spawn_capture_opts(strv_v(&argv), NULL, &o, res, err);
	strv_clear(&argv);
	return rc < 0 ? -1 : 0;
}

/* The last non-empty line of s, escaped. */
static char *
last_line(const char *s)
{
	const char *end, *start;

	if (s == NULL)
		return NULL;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	start = end;
	while (start > s && start[-1] != '\n')
		start--;
	if (start == end)
		return NULL;
	{
		char *one = xstrndup(start, (size_t)(end - start)), *t = text_escape(one, 300);
		free(one);
		return t;
	}
}

char *
remote_failure(const struct remote *r, const struct spawn_result *res)
{
	char *why, *out;

	if (res->timed_out)
		return xasprintf("host %s did not answer within %d s (ssh %s): is it up?", r->name,
				 REMOTE_TIMEOUT_MS / 1000, r->target);
	if (res->status == 255) {
		why = last_line(res->err);
		out = xasprintf("host %s: ssh %s failed: %s; check that `ssh %s true` works "
				"without a prompt", r->name, r->target, why != NULL ? why : "no reason given",
				r->target);
		free(why);
		return out;
	}
	if (res->status == 127 || res->status == 126)
		return xasprintf("host %s: '%s' cannot be run there: install hqt there, or say "
				 "where it is: hqt host rm %s; hqt host add %s %s --command PATH",
				 r->name, r->command, r->name, r->name, r->target);
	if (res->truncated)
		return xasprintf("host %s answered more than %zu MiB: refused", r->name,
				 REMOTE_OUTPUT_MAX >> 20);
	return NULL;
}

char *
remote_text(const char *s, size_t len)
{
	struct strv lines = STRV_INIT;
	const char *p = s, *end = s + len;
	char *out;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		char *one = xstrndup(p, n);

		/* A NUL inside a line ends what text_escape sees: the rest of
		 * that line is dropped, never shown raw. */
		strv_take(&lines, text_escape(one, 0));
		free(one);
		p += n + (nl != NULL ? 1 : 0);
	}
	out = strv_join(&lines, "\n");
	if (len > 0 && s[len - 1] == '\n') {
		char *t = xasprintf("%s\n", out);
		free(out);
		out = t;
	}
	strv_clear(&lines);
	return out;
}

bool
remote_json_small(const char *text, size_t len, size_t max)
{
	size_t n = 0;
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if ((c == '{' || c == '[') && ++n > max) {
			return false;
		}
	}
	return true;
}
