/* notify.h: telling the user that a session began to need them (SPEC §12):
 * a message on the hqt tmux session, a desktop notification, and the
 * user's own [notify] command. */
#ifndef HQT_NOTIFY_H
#define HQT_NOTIFY_H

struct hqt_app;
struct db_session;

/*
 * Session s now waits on the user (reason: "a permission prompt").  Each
 * channel [notify] turns on is tried; none blocks for long (the desktop
 * and the user's command run detached) and a failing one is ignored: a
 * notification is a courtesy, never an error of the command that noticed.
 */
void notify_needs(struct hqt_app *app, const struct db_session *s, const char *reason);
/* The same for session s of another machine (host, hqt host): s->id is
 * its number there; "session HOST:N", and HQT_HOST for [notify] command. */
void notify_needs_on(struct hqt_app *app, const char *host, const struct db_session *s,
		     const char *reason);

#endif
