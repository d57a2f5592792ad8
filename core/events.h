/* events.h: the harnesses' own events (Claude Code's hooks, codex's notify):
 * where a session's event file lives, and what its latest lines say. */
#ifndef HQT_EVENTS_H
#define HQT_EVENTS_H

#include <stdbool.h>

#include "plugin-host.h"

/*
 * The event file of session id: <base>/hqt/events/<id>, base
 * $XDG_RUNTIME_DIR (absolute, ours, 0700), else /run/user/<uid> (the same),
 * else /tmp with hqt-<uid> for hqt.  make: create the directories (0700,
 * checked ours and private) and the file (0600, never truncated here).
 * NULL when there is no such place (nothing to free); the caller frees.
 */
char *events_path(long long id, bool make);
/* The events directory (as events_path says; made when make), and the
 * path of session id's file in it: for a look at many sessions.  NULL when
 * dir is NULL. */
char *events_dir(bool make);
char *events_path_in(const char *dir, long long id);
/* Empty the file at a new launch: what it held was the last run's. */
void events_reset(const char *path);
/* Forget session id's file (hqt rm). */
void events_remove(long long id);
/* hqt-event beside the running executable, when it is there; caller frees. */
char *events_helper(void);

/* The latest event in a file: what it says, and when it was written. */
struct events_seen {
	enum hqt_status status;  /* HQT_STATUS_UNKNOWN: none */
	long long at_ms;         /* when its line was written (HQT_EVENT_TIME_KEY) */
	char id[37];             /* the harness session id the latest events name, or "" */
};

/*
 * Read the tail of path (at most EVENTS_TAIL bytes, whatever the file's
 * size), whole lines only, newest first, each through harness_parse_event
 * (strict JSON, UUID-like ids), at most EVENTS_LINES of them: the newest
 * line that says a status and has its time says the status (lines that
 * say nothing, such as codex's notify of its own title thread, are passed
 * over), and the newest that names an id says the id.  A file last
 * written before not_before (unix seconds; 0: any) is not read: it cannot
 * be newer than what the caller has.  0 with *out, -1 when there is no
 * such file.
 */
#define EVENTS_TAIL 65536
#define EVENTS_SHORT_TAIL 4096
#define EVENTS_LINES 64
int events_latest(const struct harness *h, const char *path, long long not_before,
		  struct events_seen *out);

/*
 * The status of a live pane: the latest event while it is at least as new
 * as the screen's evidence (the pane's last output, whole seconds), then
 * the screen (the plugin's reading of it), then recent output (working
 * when within active_s seconds of now).  All times in seconds but ev_ms.
 */
enum hqt_status events_decide(enum hqt_status screen, long long activity, long long now,
			      int active_s, enum hqt_status ev, long long ev_ms,
			      long long spawned_at);

#endif
