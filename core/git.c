/* git.c: hqt's own git runs, which obey nothing a session wrote, and a
 * checkout's gitlinks, read from its index. */
#include "git.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* git's answer to anything hqt asks: a minute is a wedged repository. */
#define GIT_TIMEOUT_MS 60000
/* An index bigger than this is no checkout a session works in. */
#define GIT_INDEX_MAX ((size_t)1 << 30)

/*
 * What a session can write is read by the git hqt runs: a worktree's files
 * and, were it not read-only in the sandbox, a submodule's .git (git at the
 * top runs `git status` inside every gitlink holding a repository, and that
 * child obeys its core.fsmonitor).  So every key that makes git run a
 * program on its own is switched off here, where a command line wins over
 * every configuration file; the commands that look into submodules are
 * told --ignore-submodules=all by their callers.
 */
static const char *const git_safe[] = {
	"--no-optional-locks",        /* a look never rewrites the index */
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "submodule.recurse=false",
	"-c", "status.submoduleSummary=false",
	"-c", "diff.ignoreSubmodules=all",
	"-c", "core.pager=cat",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
};

/* Our environment without GIT_* (GIT_DIR, GIT_CONFIG_PARAMETERS, ...:
 * whatever ran hqt cannot point its git elsewhere), and no prompt. */
static char **
git_env(void)
{
	struct strv env = STRV_INIT;

	for (char **e = environ; e != NULL && *e != NULL; e++)
		if (strncmp(*e, "GIT_", 4) != 0)
			strv_push(&env, *e);
	strv_push(&env, "GIT_TERMINAL_PROMPT=0");
	/* Whatever an inherited GIT_NO_LAZY_FETCH=0 says: a fetch from a
	 * session's store must never make its upload-pack fetch with the
	 * store's configuration (CVE-2024-32465). */
	strv_push(&env, "GIT_NO_LAZY_FETCH=1");
	return strv_detach(&env);
}

int
git_run(const char *dir, const char *const args[], struct spawn_result *r, char **err)
{
	return git_run_input(dir, args, NULL, r, err);
}

int
git_run_input(const char *dir, const char *const args[], const char *input,
	      struct spawn_result *r, char **err)
{
	struct spawn_opts o = { .cwd = dir, .timeout_ms = GIT_TIMEOUT_MS, .input = input };
	struct strv argv = STRV_INIT;
	const char *verb = "";
	char **env = git_env();
	int rc;

	/* The verb, for the error: past the caller's "-c KEY=VALUE"s. */
	for (size_t i = 0; args[i] != NULL; i++) {
		if (strcmp(args[i], "-c") == 0 && args[i + 1] != NULL) {
			i++;
			continue;
		}
		verb = args[i];
		break;
	}
	strv_push(&argv, "git");
	for (size_t i = 0; i < ARRAY_SIZE(git_safe); i++)
		strv_push(&argv, git_safe[i]);
	for (; *args != NULL; args++)
		strv_push(&argv, *args);
	memset(r, 0, sizeof *r);
	rc = spawn_capture_opts(strv_v(&argv), env, &o, r, err);
	strv_free_array(env);
	strv_clear(&argv);
	if (rc < 0)
		return -1;
	if (r->status == 0 && !r->timed_out)
		return 0;
	{
		char *line = r->err != NULL ? xstrndup(r->err, strcspn(r->err, "\n")) : NULL;
		set_err(err, "git %s: %s", verb,
			r->timed_out ? "timed out" : line != NULL && *line != '\0' ? line : "failed");
		free(line);
	}
	return -1;
}

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* git's varint (varint.c): 7 bits a byte, each continuation adding one. */
static int
varint(const unsigned char **p, const unsigned char *end, size_t *out)
{
	const unsigned char *s = *p;
	size_t v;

	if (s >= end)
		return -1;
	v = *s & 127;
	while (*s++ & 128) {
		if (s >= end || v >= (SIZE_MAX >> 8))
			return -1;
		v = ((v + 1) << 7) | (*s & 127);
	}
	*p = s;
	*out = v;
	return 0;
}

#define GITLINK_MODE 0160000u
#define PATH_LONGEST 4096

/* The entries of an index with hash length hlen: 0 when every byte is
 * accounted for, -1 when not (try another length), 1 for a split index. */
static int
parse_index(const unsigned char *buf, size_t len, size_t hlen, struct strv *out)
{
	uint32_t version = be32(buf + 4), count = be32(buf + 8);
	const unsigned char *p = buf + 12, *end = buf + len;
	char *name = xmalloc(PATH_LONGEST + 1);
	size_t name_len = 0, first = out->n;
	int rc = -1;

	if (len < 12 + hlen)
		goto out;
	end -= hlen; /* the trailing hash */
	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *e = p;
		size_t fixed = 40 + hlen + 2, nlen;
		uint32_t mode;
		uint16_t flags;

		if ((size_t)(end - p) < fixed)
			goto out;
		mode = be32(e + 24);
		flags = (uint16_t)(e[40 + hlen] << 8 | e[41 + hlen]);
		if (flags & 0x4000) { /* extended: a second flags word, v3 and on */
			if (version < 3 || (size_t)(end - p) < fixed + 2)
				goto out;
			fixed += 2;
		}
		p += fixed;
		if (version == 4) {
			size_t strip;
			const unsigned char *nul;

			if (varint(&p, end, &strip) < 0 || strip > name_len)
				goto out;
			nul = memchr(p, '\0', (size_t)(end - p));
			if (nul == NULL)
				goto out;
			nlen = name_len - strip + (size_t)(nul - p);
			if (nlen > PATH_LONGEST)
				goto out;
			memcpy(name + name_len - strip, p, (size_t)(nul - p));
			name_len = nlen;
			p = nul + 1;
		} else {
			const unsigned char *nul = memchr(p, '\0', (size_t)(end - p));
			size_t total;

			if (nul == NULL)
				goto out;
			nlen = (size_t)(nul - p);
			if (nlen > PATH_LONGEST || ((flags & 0xfff) != 0xfff && nlen != (flags & 0xfffu)))
				goto out;
			memcpy(name, p, nlen);
			name_len = nlen;
			/* padded with 1 to 8 NULs to a multiple of 8 */
			total = (fixed + nlen + 8) & ~(size_t)7;
			if ((size_t)(end - e) < total)
				goto out;
			for (const unsigned char *z = p + nlen; z < e + total; z++)
				if (*z != '\0')
					goto out;
			p = e + total;
		}
		name[name_len] = '\0';
		/* An empty name is a split index's entry that replaces one of
		 * the shared index (the "link" extension below says so). */
		if (name_len > 0 && (mode & 0170000u) == GITLINK_MODE && strlen(name) == name_len &&
		    (out->n == first || strcmp(out->v[out->n - 1], name) != 0)) {
			if (out->n - first >= GIT_GITLINKS_MAX)
				goto out;
			strv_push(out, name);
		}
	}
	/* Extensions: a signature, a size, the data; then the hash. */
	while (p < end) {
		uint32_t size;

		if ((size_t)(end - p) < 8)
			goto out;
		size = be32(p + 4);
		if (memcmp(p, "link", 4) == 0) {
			rc = 1; /* a split index: the rest is in another file */
			goto out;
		}
		p += 8;
		if (size > (size_t)(end - p))
			goto out;
		p += size;
	}
	rc = 0;
out:
	if (rc != 0)
		while (out->n > first)
			free(out->v[--out->n]), out->v[out->n] = NULL;
	free(name);
	return rc;
}

int
git_index_gitlinks(const unsigned char *buf, size_t len, struct strv *out)
{
	static const size_t hashes[] = { 20, 32 }; /* SHA-1, SHA-256 */
	uint32_t version;

	if (len < 12 || memcmp(buf, "DIRC", 4) != 0)
		return -1;
	version = be32(buf + 4);
	if (version < 2 || version > 4)
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(hashes); i++) {
		int rc = parse_index(buf, len, hashes[i], out);
		if (rc >= 0)
			return rc;
	}
	return -1;
}

/* The index of dir's checkout: .git/index, or that of the git directory a
 * .git file names.  NULL when there is none. */
static char *
index_path(const char *dir)
{
	char *dotgit = xasprintf("%s/.git", dir), *out = NULL;
	struct stat st;

	if (lstat(dotgit, &st) != 0)
		goto done;
	if (S_ISDIR(st.st_mode)) {
		out = xasprintf("%s/index", dotgit);
	} else if (S_ISREG(st.st_mode)) {
		char *text = read_file(dotgit, 4096, NULL), *v;

		if (text != NULL && strncmp(text, "gitdir:", 7) == 0) {
			v = trim(text + 7);
			if (*v != '\0')
				out = v[0] == '/' ? xasprintf("%s/index", v)
						  : xasprintf("%s/%s/index", dir, v);
		}
		free(text);
	}
done:
	free(dotgit);
	return out;
}

/* `git ls-files --stage -z`: "MODE HASH STAGE\tPATH\0" a line. */
static int
gitlinks_from_git(const char *dir, struct strv *out, char **err)
{
	const char *args[] = { "ls-files", "--stage", "-z", NULL };
	struct spawn_result r;
	size_t first = out->n;

	if (git_run(dir, args, &r, err) != 0 || r.truncated) {
		if (r.truncated)
			set_err(err, "git ls-files in '%s': more gitlinks than hqt reads", dir);
		spawn_result_free(&r);
		return -1;
	}
	for (const char *s = r.out; s != NULL && s < r.out + r.out_len;) {
		const char *tab = strchr(s, '\t');

		if (tab == NULL)
			break;
		if (strncmp(s, "160000 ", 7) == 0 &&
		    (out->n == first || strcmp(out->v[out->n - 1], tab + 1) != 0))
			strv_push(out, tab + 1);
		s = tab + 1 + strlen(tab + 1) + 1;
	}
	spawn_result_free(&r);
	return 0;
}

int
git_gitlinks(const char *dir, struct strv *out, char **err)
{
	char *path = index_path(dir);
	struct stat st;
	void *map;
	int fd, rc;

	if (path == NULL)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		rc = errno == ENOENT ? 0 : -1;
		if (rc < 0)
			set_err(err, "cannot read the git index '%s': %s", path, strerror(errno));
		free(path);
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > GIT_INDEX_MAX) {
		set_err(err, "'%s' is not a git index hqt can read", path);
		close(fd);
		free(path);
		return -1;
	}
	if (st.st_size == 0) {
		close(fd);
		free(path);
		return 0;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		set_err(err, "cannot read the git index '%s': %s", path, strerror(errno));
		free(path);
		return -1;
	}
	rc = git_index_gitlinks(map, (size_t)st.st_size, out);
	munmap(map, (size_t)st.st_size);
	if (rc > 0)
		rc = gitlinks_from_git(dir, out, err);
	else if (rc < 0)
		set_err(err, "'%s' is not a git index hqt can read", path);
	free(path);
	return rc;
}

/*
 * git_config_file_get (git.h): one key of one config file, read as git
 * does.  Not inih: git indents its keys with a tab, which Debian's inih
 * (built with INI_ALLOW_MULTILINE) reads as the previous key's
 * continuation, so every key after the first was lost.
 * What is read: "[section]" or "[section \"sub\"]" headers (a key may
 * follow on the same line), "name = value" and a bare "name" (true), "#"
 * and ";" comments, a value's quoted parts with git's escapes (\" \\ \n
 * \t \b) and a trailing backslash continuing it on the next line.
 * Includes are not followed: this is the repository's own file.
 */
char *
git_config_file_get(const char *file, const char *section, const char *key)
{
	size_t len = 0;
	char *text = read_file(file, 1 << 20, &len), *p, *out = NULL, *val;
	bool in = false;

	if (text == NULL)
		return NULL;
	val = xmalloc(len + 1);
	for (p = text; p < text + len;) {
		char *name, *name_end;

		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (*p == '[') {
			char *sec = ++p;

			while (*p != '\0' && *p != ']' && *p != '\n' && *p != ' ' && *p != '\t' &&
			       *p != '"')
				p++;
			in = (size_t)(p - sec) == strlen(section) &&
			     strncasecmp(sec, section, (size_t)(p - sec)) == 0;
			while (*p != '\0' && *p != ']' && *p != '\n')
				p++;
			if (*p != ']')
				in = false; /* (a subsection is another section) */
			else if (p[-1] == '"' || memchr(sec, '"', (size_t)(p - sec)) != NULL)
				in = false;
			if (*p == ']')
				p++;
			continue;
		}
		if (*p == '#' || *p == ';' || *p == '\n' || *p == '\0') {
			while (*p != '\0' && *p != '\n')
				p++;
			p++; /* past the newline, or a NUL in the file */
			continue;
		}
		name = p;
		while (isalnum((unsigned char)*p) || *p == '-')
			p++;
		name_end = p;
		while (*p == ' ' || *p == '\t')
			p++;
		/* The value, with quotes, escapes and continuations undone. */
		char *v = val;
		bool quoted = false, is_key = name_end > name;

		if (*p == '=') {
			char *last_plain = val;

			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			for (; *p != '\0'; p++) {
				if (*p == '\n')
					break;
				if (!quoted && (*p == '#' || *p == ';')) {
					while (*p != '\0' && *p != '\n')
						p++;
					break;
				}
				if (*p == '"') {
					quoted = !quoted;
					last_plain = v;
					continue;
				}
				if (*p == '\\' && p[1] != '\0') {
					p++;
					*v++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'b' ? '\b' : *p;
					if (*p == '\n')
						v--; /* a continuation */
					last_plain = v;
					continue;
				}
				*v++ = *p;
				if (quoted || (*p != ' ' && *p != '\t'))
					last_plain = v;
			}
			v = last_plain; /* trailing blanks outside quotes go */
		} else if (*p != '\n' && *p != '\0' && *p != '#' && *p != ';')
			is_key = false;
		*v = '\0';
		if (in && is_key && (size_t)(name_end - name) == strlen(key) &&
		    strncasecmp(name, key, strlen(key)) == 0) {
			free(out);
			out = xstrdup(val);
		}
		while (*p != '\0' && *p != '\n')
			p++;
		if (*p == '\n')
			p++;
	}
	free(val);
	free(text);
	return out;
}
