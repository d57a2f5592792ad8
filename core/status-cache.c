/* status-cache.c: the last status read from each session's screen, kept in
 * hqt's runtime directory between commands (status-cache.h). */
#include "status-cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "util.h"

/*
 * The file:
 *
 *   hqt-status-cache 1
 *   ID GEN PANE PID WIDTH HEIGHT ACTIVITY AT STATUS      one per session
 *   end COUNT SUM
 *
 * GEN and SUM 16 hex digits, SUM the hash of every byte before "end".  A
 * checksum, not a signature: the directory is the user's own and private,
 * so what it guards against is a file cut short or gone bad, which must
 * never pass for a status.
 */
#define TAG "hqt-status-cache 1\n"

static uint64_t
hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#define HASH_INIT 0xcbf29ce484222325ull

static uint64_t
hash_str(uint64_t h, const char *s)
{
	/* The terminating NUL too: "ab","c" and "a","bc" differ. */
	return hash_bytes(h, s != NULL ? s : "", s != NULL ? strlen(s) + 1 : 1);
}

uint64_t
status_cache_gen(const struct harness *h)
{
	uint64_t g = HASH_INIT;
	struct stat st;

	g = hash_str(g, h->name);
	g = hash_str(g, h->plugin->file);
	g = hash_str(g, h->plugin->abi);
	if (stat(h->plugin->file, &st) == 0) {
		long long v[] = { (long long)st.st_dev, (long long)st.st_ino, (long long)st.st_size,
				  (long long)st.st_mtim.tv_sec, (long long)st.st_mtim.tv_nsec,
				  (long long)st.st_ctim.tv_sec, (long long)st.st_ctim.tv_nsec };
		g = hash_bytes(g, v, sizeof v);
	} else
		g = hash_str(g, "no file");
	if (h->section != NULL) {
		g = hash_str(g, h->section->plugin);
		for (size_t i = 0; i < h->section->keys.n; i++) {
			g = hash_str(g, h->section->keys.v[i]);
			g = hash_str(g, h->section->values.v[i]);
		}
	}
	return g;
}

static void
entries_clear(struct status_cache *c)
{
	free(c->v);
	c->v = NULL;
	c->n = c->cap = 0;
}

static struct status_cache_entry *
entry_add(struct status_cache *c)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->v = xreallocarray(c->v, c->cap, sizeof *c->v);
	}
	memset(&c->v[c->n], 0, sizeof c->v[c->n]);
	return &c->v[c->n++];
}

/* A decimal in [lo, hi] (lo >= 0), the whole word: digits only, no sign,
 * at most 18 of them (no overflow). */
static bool
word_num(const char *w, long long lo, long long hi, long long *out)
{
	long long v = 0;
	size_t n = 0;

	for (; w[n] >= '0' && w[n] <= '9'; n++) {
		if (n == 18)
			return false;
		v = v * 10 + (w[n] - '0');
	}
	if (n == 0 || w[n] != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static bool
word_hex(const char *w, uint64_t *out)
{
	char *end;

	if (strlen(w) != 16 || strspn(w, "0123456789abcdef") != 16)
		return false;
	errno = 0;
	*out = strtoull(w, &end, 16);
	return errno == 0 && *end == '\0';
}

static bool
pane_id_ok(const char *w)
{
	size_t n = strlen(w);

	return n >= 2 && n < sizeof ((struct tmux_seen *)0)->pane_id && w[0] == '%' &&
	       strspn(w + 1, "0123456789") == n - 1;
}

/* Split line (NUL-terminated, modified) into at most max words at single spaces. */
static size_t
split_words(char *line, char **w, size_t max)
{
	size_t n = 0;

	for (char *p = line; n < max;) {
		w[n++] = p;
		p = strchr(p, ' ');
		if (p == NULL)
			return n;
		*p++ = '\0';
	}
	return max + 1; /* too many */
}

static bool
parse_entry(char *line, struct status_cache_entry *e)
{
	char *w[9];
	long long v[7];
	static const long long lo[7] = { 1, 1, 0, 0, 0, 0, 0 };
	static const long long hi[7] = { (1ll << 53), (1ll << 31), 100000, 100000, (1ll << 40),
					 (1ll << 40), 3 };
	const int at[7] = { 0, 3, 4, 5, 6, 7, 8 };

	if (split_words(line, w, 9) != 9 || !pane_id_ok(w[2]) || !word_hex(w[1], &e->gen))
		return false;
	for (int i = 0; i < 7; i++)
		if (!word_num(w[at[i]], lo[i], hi[i], &v[i]))
			return false;
	e->id = v[0];
	e->seen.want = TMUX_WANT_CHANGED;
	memcpy(e->seen.pane_id, w[2], strlen(w[2]) + 1); /* pane_id_ok: it fits */
	e->seen.pid = (long)v[1];
	e->seen.width = (unsigned)v[2];
	e->seen.height = (unsigned)v[3];
	e->seen.activity = v[4];
	e->seen.at = v[5];
	e->status = (enum hqt_status)v[6];
	return true;
}

static int
cmp_entry(const void *a, const void *b)
{
	const struct status_cache_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int
status_cache_parse(struct status_cache *c, const char *text, size_t len)
{
	const char *end_line, *p;
	char *copy, *line, tail[64];
	long long count, got = 0;
	uint64_t sum;

	entries_clear(c);
	if (len < sizeof TAG - 1 || memcmp(text, TAG, sizeof TAG - 1) != 0 ||
	    memchr(text, '\0', len) != NULL || text[len - 1] != '\n')
		return -1;
	/* The last line: "end COUNT SUM\n", and the sum of all before it. */
	end_line = text + len - 1;
	while (end_line > text && end_line[-1] != '\n')
		end_line--;
	if ((size_t)(text + len - end_line) >= sizeof tail)
		return -1;
	memcpy(tail, end_line, (size_t)(text + len - end_line - 1));
	tail[text + len - end_line - 1] = '\0';
	{
		char *w[3];

		if (strncmp(tail, "end ", 4) != 0 || split_words(tail, w, 3) != 3 ||
		    !word_num(w[1], 0, 1 << 24, &count) || !word_hex(w[2], &sum) ||
		    hash_bytes(HASH_INIT, text, (size_t)(end_line - text)) != sum)
			return -1;
	}
	copy = xstrndup(text + sizeof TAG - 1, (size_t)(end_line - text) - (sizeof TAG - 1));
	for (line = copy; *line != '\0'; line = (char *)p + 1) {
		struct status_cache_entry e;
		char *nl = strchr(line, '\n');

		if (nl == NULL)
			break;
		*nl = '\0';
		p = nl;
		got++;
		memset(&e, 0, sizeof e);
		if (parse_entry(line, &e))
			*entry_add(c) = e;
	}
	free(copy);
	if (got != count) {
		entries_clear(c);
		return -1;
	}
	if (c->n > 1)
		qsort(c->v, c->n, sizeof *c->v, cmp_entry);
	/* Two entries of one session: neither is trusted. */
	for (size_t i = 0; i + 1 < c->n; i++)
		if (c->v[i].id == c->v[i + 1].id) {
			entries_clear(c);
			return -1;
		}
	return 0;
}

/* The file of this place: status-<hash of db, socket, session>. */
static char *
cache_path(bool make, const char *db_path, const char *sock, const char *session)
{
	char *dir = hqt_runtime_dir(make), *path;
	uint64_t h = HASH_INIT;

	if (dir == NULL)
		return NULL;
	h = hash_str(h, db_path);
	h = hash_str(h, sock);
	h = hash_str(h, session);
	path = xasprintf("%s/status-%016llx", dir, (unsigned long long)h);
	free(dir);
	return path;
}

void
status_cache_load(struct status_cache *c, const char *db_path, const char *tmux_socket,
		  const char *tmux_session)
{
	struct stat st;
	char *buf;
	ssize_t got;
	size_t len = 0;
	int fd;

	memset(c, 0, sizeof *c);
	c->path = cache_path(true, db_path, tmux_socket, tmux_session);
	if (c->path == NULL)
		return;
	fd = open(c->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077) != 0 || st.st_size <= 0 ||
	    (unsigned long long)st.st_size > STATUS_CACHE_MAX_BYTES) {
		close(fd);
		c->dirty = true; /* replaced by a good one */
		return;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (len < (size_t)st.st_size &&
	       (got = read(fd, buf + len, (size_t)st.st_size - len)) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len += (size_t)got;
	}
	close(fd);
	if (len != (size_t)st.st_size || status_cache_parse(c, buf, len) != 0)
		c->dirty = true;
	free(buf);
}

struct status_cache_entry *
status_cache_find(struct status_cache *c, long long id, uint64_t gen)
{
	struct status_cache_entry key = { .id = id }, *e;

	if (c->n == 0)
		return NULL;
	e = bsearch(&key, c->v, c->n, sizeof *c->v, cmp_entry);
	return e != NULL && e->gen == gen ? e : NULL;
}

void
status_cache_keep(struct status_cache_entry *e)
{
	e->kept = true;
}

static bool
seen_equal(const struct tmux_seen *a, const struct tmux_seen *b)
{
	return a->want == b->want && strcmp(a->pane_id, b->pane_id) == 0 && a->pid == b->pid &&
	       a->width == b->width && a->height == b->height && a->activity == b->activity &&
	       a->at == b->at;
}

void
status_cache_put(struct status_cache *c, long long id, uint64_t gen,
		 const struct tmux_seen *seen, enum hqt_status status)
{
	struct status_cache_entry key = { .id = id }, *e = NULL;

	if (c->n > 0)
		e = bsearch(&key, c->v, c->n, sizeof *c->v, cmp_entry);
	if (e != NULL && e->gen == gen && e->status == status && seen_equal(&e->seen, seen)) {
		e->kept = true;
		return;
	}
	if (e == NULL) {
		e = entry_add(c);
		e->id = id;
		/* Kept sorted: ids mostly come in order. */
		for (size_t i = c->n - 1; i > 0 && c->v[i - 1].id > c->v[i].id; i--) {
			struct status_cache_entry t = c->v[i];
			c->v[i] = c->v[i - 1];
			c->v[i - 1] = t;
		}
		e = bsearch(&key, c->v, c->n, sizeof *c->v, cmp_entry);
	}
	e->gen = gen;
	e->seen = *seen;
	e->status = status;
	e->kept = true;
	c->dirty = true;
}

static int
cmp_id(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

void
status_cache_keep_unlisted(struct status_cache *c, long long *listed, size_t n, long long now)
{
	if (n > 1)
		qsort(listed, n, sizeof *listed, cmp_id);
	for (size_t i = 0; i < c->n; i++)
		if (!c->v[i].kept && c->v[i].seen.at >= now - STATUS_CACHE_UNLISTED_SECONDS &&
		    (n == 0 || bsearch(&c->v[i].id, listed, n, sizeof *listed, cmp_id) == NULL))
			c->v[i].kept = true;
}

char *
status_cache_format(const struct status_cache *c, size_t *len)
{
	struct strbuf {
		char *s;
		size_t n, cap;
	} b = { NULL, 0, 0 };
	size_t count = 0;
	char line[256];

#define PUT(str, l)                                                                    \
	do {                                                                           \
		size_t l_ = (l);                                                       \
		if (b.n + l_ + 1 > b.cap) {                                            \
			b.cap = (b.n + l_ + 1) * 2;                                    \
			b.s = xreallocarray(b.s, b.cap, 1);                                  \
		}                                                                      \
		memcpy(b.s + b.n, (str), l_);                                          \
		b.n += l_;                                                             \
	} while (0)

	PUT(TAG, sizeof TAG - 1);
	for (size_t i = 0; i < c->n; i++) {
		const struct status_cache_entry *e = &c->v[i];
		int n;

		if (!e->kept)
			continue;
		n = snprintf(line, sizeof line, "%lld %016llx %s %ld %u %u %lld %lld %d\n", e->id,
			     (unsigned long long)e->gen, e->seen.pane_id, e->seen.pid,
			     e->seen.width, e->seen.height, e->seen.activity, e->seen.at,
			     (int)e->status);
		if (n <= 0 || (size_t)n >= sizeof line)
			continue;
		PUT(line, (size_t)n);
		count++;
	}
	{
		int n = snprintf(line, sizeof line, "end %zu %016llx\n", count,
				 (unsigned long long)hash_bytes(HASH_INIT, b.s, b.n));
		PUT(line, (size_t)n);
	}
#undef PUT
	b.s[b.n] = '\0';
	*len = b.n;
	return b.s;
}

void
status_cache_save(struct status_cache *c)
{
	char *text, *tmp;
	size_t len, off = 0;
	int fd;

	for (size_t i = 0; i < c->n && !c->dirty; i++)
		if (!c->v[i].kept)
			c->dirty = true; /* a session gone, or read otherwise */
	if (c->path == NULL || !c->dirty)
		return;
	text = status_cache_format(c, &len);
	tmp = xasprintf("%s.XXXXXX", c->path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		free(tmp);
		free(text);
		return;
	}
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	/* No fsync: the runtime directory is a tmpfs, and a cache lost is
	 * only a capture more. */
	if (close(fd) != 0 || off != len || rename(tmp, c->path) != 0)
		unlink(tmp);
	else
		c->dirty = false;
	free(tmp);
	free(text);
}

void
status_cache_free(struct status_cache *c)
{
	if (c == NULL)
		return;
	free(c->path);
	entries_clear(c);
	memset(c, 0, sizeof *c);
}
