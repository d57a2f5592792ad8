/* events.h: the harnesses' own events (Claude Code's hooks, codex's notify):
 * where a session's event file lives, and what its latest lines say. */
#ifndef HQT_EVENTS_H
#define HQT_EVENTS_H

#include <stdbool.h>

#include "plugin-host.h"

/*
 * The events of the database at db: <base>/hqt/events/<dev>-<ino>/, the
 * database file's device and inode in hex, base $XDG_RUNTIME_DIR (absolute,
 * ours, 0700), else /run/user/<uid> (the same), else /tmp with hqt-<uid>
 * for hqt.  Two hqt instances of one user (another --db, another tmux
 * server) number their sessions alike: by the database too, one
 * instance's session 1 never reads or writes another's.  The file, not
 * its path: a database reached by a symlink or moved is still itself,
 * and there is no hash to collide (decisions.md).  NULL when db is NULL
 * or names no file (":memory:": the screen alone), or when there is no
 * such place; the caller frees.
 *
 * events_dir: that directory (made when make, 0700, checked ours and
 * private); events_path_in: session id's file in it, for a look at many
 * sessions (NULL when dir is NULL); events_path: the same in one call,
 * with make also the file (0600, never truncated here).
 */
char *events_dir(const char *db, bool make);
char *events_path_in(const char *dir, long long id);
char *events_path(const char *db, long long id, bool make);
/* Empty the file at a new launch: what it held was the last run's. */
void events_reset(const char *path);
/* Forget the file of the database's session id (hqt rm). */
void events_remove(const char *db, long long id);
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
