/* util.h: allocation that never fails, formatted strings, small path helpers. */
#ifndef HQT_UTIL_H
#define HQT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#if defined(__GNUC__)
#define HQT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define HQT_NORETURN __attribute__((noreturn))
#else
#define HQT_PRINTF(a, b)
#define HQT_NORETURN
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation failure aborts (tmux's xmalloc); all of these return non-NULL. */
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) HQT_PRINTF(1, 2);
char *xvasprintf(const char *fmt, va_list ap) HQT_PRINTF(1, 0);

/* Replace *errp (freeing the old text) with a formatted message; errp may be NULL. */
void set_err(char **errp, const char *fmt, ...) HQT_PRINTF(2, 3);

/* "~" and "~/x" expanded against $HOME; anything else copied. Caller frees. */
char *expand_home(const char *path);
/* $XDG_DATA_HOME or ~/.local/share, $XDG_CONFIG_HOME or ~/.config. Caller frees. */
char *xdg_data_home(void);
char *xdg_config_home(void);
/* The user's home: $HOME, else the passwd entry. Caller frees; NULL if none. */
char *user_home(void);

/* mkdir -p with mode for new components; 0 or -1 with errno. */
int mkdir_p(const char *path, unsigned mode);

/* Parse a decimal long from all of s; 0 on success. */
int parse_long(const char *s, long *out);

/* Trim blanks at both ends in place; returns s. */
char *trim(char *s);

/*
 * The one rule for an environment variable's name, everywhere hqt takes one
 * (hqt.ini's [sandbox] env, a plugin's or the sandbox's NAME=VALUE, the
 * stored policy, tmux -e): the first n bytes of s are 1 to ENV_NAME_MAX
 * ASCII letters, digits and '_', not starting with a digit (POSIX's
 * portable names; no locale decides).
 */
#define ENV_NAME_MAX 255
bool env_name_valid(const char *s, size_t n);

/* True when s is non-empty and made only of [a-z0-9_-]. */
bool valid_name(const char *s);

/* The path of the running executable, from /proc/self/exe (caller frees), or NULL. */
char *self_exe(void);
/* "<the directory of our executable>/name" (hqt-tui, hqt-event beside
 * hqt), or NULL when it cannot be told.  Caller frees. */
char *self_sibling(const char *name);

/* A directory that is ours and private (0700, not a symlink); make: mkdir
 * it first (an existing one must pass the same check). */
bool private_dir(const char *path);
bool make_private_dir(const char *path);
/* hqt's runtime directory: <base>/hqt, base $XDG_RUNTIME_DIR (absolute,
 * ours, 0700), else /run/user/<uid> (the same), else /tmp/hqt-<uid>, each
 * checked ours and private; made when make.  NULL when there is none
 * (nothing to free); the caller frees. */
char *hqt_runtime_dir(bool make);

/* Read a whole file (at most max bytes); NULL with errno on failure. */
char *read_file(const char *path, size_t max, size_t *lenp);

#endif
