/* remote.h: hqt on other machines, driven over OpenSSH (SPEC §13): the ssh
 * command that runs the remote hqt's verb, one shared connection per host,
 * and what comes back made safe to show. */
#ifndef HQT_REMOTE_H
#define HQT_REMOTE_H

#include <stdbool.h>

#include "process.h"
#include "strv.h"

/* A host as stored (db.h's db_host); borrowed. */
struct remote {
	const char *name;     /* hqt's name for it */
	const char *target;   /* the ssh destination */
	const char *command;  /* the remote hqt, shell words ("hqt") */
};

/* What one verb may print before it is cut, and how long a look waits. */
#define REMOTE_OUTPUT_MAX ((size_t)8 << 20)
#define REMOTE_TIMEOUT_MS 15000

/*
 * Whether target is one this hqt passes to ssh: not empty, no leading '-'
 * (it would be an option), no blank or control character.  name as
 * valid_name().
 */
bool remote_target_valid(const char *target);

/*
 * ssh's argv to run `command ARGS...` there: ssh found on PATH, BatchMode
 * (never a prompt), the user's own configuration, keys and known hosts,
 * one connection shared per host (ControlMaster=auto, ControlPersist, the
 * socket in a private directory of hqt's runtime directory), a connect
 * timeout; tty: -t (attach), else -T.  Every argument is single-quoted
 * for the remote shell (ssh joins its arguments into one command line
 * there), so it arrives as one word, whatever it holds.  0, or -1 with
 * *err (no ssh, no private directory).
 */
int remote_argv(const struct remote *r, char *const args[], bool tty, struct strv *out,
		char **err);

/*
 * Whether a host's JSON answer of len bytes holds at most max objects and
 * arrays ('{' and '[' outside strings), counted before any parse: 8 MiB
 * of "{}," is 2.8 million objects, over half a gigabyte once parsed.
 */
#define REMOTE_JSON_CONTAINERS_MAX 65536
bool remote_json_small(const char *text, size_t len, size_t max);

/* End the shared connection to r, if one is up (hqt host rm). */
void remote_close(const struct remote *r);

/*
 * Run args there and wait at most timeout_ms, output bounded
 * (REMOTE_OUTPUT_MAX).  0 with *res (its status the remote hqt's, or
 * ssh's 255), -1 with *err when ssh could not be started.
 */
int remote_run(const struct remote *r, char *const args[], int timeout_ms,
	       struct spawn_result *res, char **err);

/*
 * Why a run failed, in one line with the fix, when it is ssh's or the
 * remote shell's doing (ssh's 255, a timeout, hqt missing there: 127);
 * NULL when the remote hqt itself answered (its own "hqt: ..." line says
 * why).  Caller frees.
 */
char *remote_failure(const struct remote *r, const struct spawn_result *res);

/* Text from a host made safe for a terminal: each line through
 * text_escape, the line breaks kept.  Caller frees. */
char *remote_text(const char *s, size_t len);

#endif
