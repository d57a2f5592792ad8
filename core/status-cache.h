/* status-cache.h: what each session's screen said when it was last read, so
 * that a status read captures only the screens that changed since. */
#ifndef HQT_STATUS_CACHE_H
#define HQT_STATUS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin-host.h"
#include "tmux.h"

/*
 * One file per user and place (database, tmux server and session):
 * <runtime>/hqt/status-<hash> (hqt_runtime_dir), 0600, replaced whole by
 * rename.  Its content is never trusted: a file that is not ours and
 * private, too big, of another format, or whose checksum does not match is
 * ignored whole, a line that does not parse is ignored, and an entry is
 * used only when tmux says the pane is exactly as it was (tmux_seen_still)
 * and it was read by the same plugin and settings (gen).  Ignoring costs a
 * capture, nothing more.
 */
struct status_cache_entry {
	long long id;            /* the session's number */
	uint64_t gen;            /* status_cache_gen of the harness that read it */
	struct tmux_seen seen;   /* the screen that was read */
	enum hqt_status status;  /* what the plugin read in it */
	bool kept;               /* (in memory) used or written by this read */
};

struct status_cache {
	char *path;              /* NULL: nowhere safe to keep one */
	struct status_cache_entry *v;
	size_t n, cap;
	bool dirty;              /* differs from the file */
};

#define STATUS_CACHE_MAX_BYTES (4u << 20)

/* Load the cache of this place; never fails (empty when unusable). */
void status_cache_load(struct status_cache *c, const char *db_path, const char *tmux_socket,
		       const char *tmux_session);
/* The entry of session id read with gen, or NULL. */
struct status_cache_entry *status_cache_find(struct status_cache *c, long long id, uint64_t gen);
/* Keep id's entry as it is (its screen is still the one read). */
void status_cache_keep(struct status_cache_entry *e);
/* Record a fresh read of id's screen. */
void status_cache_put(struct status_cache *c, long long id, uint64_t gen,
		      const struct tmux_seen *seen, enum hqt_status status);
/*
 * A read of some sessions (hqt show) keeps the others' entries: those not
 * in listed (sorted here) read within STATUS_CACHE_UNLISTED_SECONDS of
 * now.  A removed session's entry so goes within a day.
 */
#define STATUS_CACHE_UNLISTED_SECONDS 86400
void status_cache_keep_unlisted(struct status_cache *c, long long *listed, size_t n,
				long long now);
/* Write the kept and put entries (only when something changed), by rename. */
void status_cache_save(struct status_cache *c);
void status_cache_free(struct status_cache *c);

/* What a harness's reading of a screen depends on beyond the screen: its
 * name, its plugin's file (identity, size, time) and ABI, its INI section. */
uint64_t status_cache_gen(const struct harness *h);

/* The parser, for tests and the fuzz target: entries of text into c (which
 * keeps its path); 0, or -1 when the whole text is refused (c emptied). */
int status_cache_parse(struct status_cache *c, const char *text, size_t len);
/* The file's text for c's kept entries; caller frees. */
char *status_cache_format(const struct status_cache *c, size_t *len);

#endif
