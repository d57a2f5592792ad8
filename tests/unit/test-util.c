/* test-util.c: the small helpers every part of hqt shares; here the one rule
 * for an environment variable's name, and that the config, the stored
 * sandbox policy and the sandbox's environment all apply it; a table
 * cell's width. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "text.h"
#include "util.h"

static char *
name_of(size_t n)
{
	char *s = xmalloc(n + 1);

	memset(s, 'N', n);
	s[n] = '\0';
	return s;
}

Test(util, env_name_valid_is_posix_portable_and_bounded)
{
	static const char *const good[] = { "A", "_", "PATH", "LC_ALL", "a1", "_9", "x_Y_z" };
	static const char *const bad[] = {
		"", "1A", "9LIVES", "A-B", "A=B", "A B", "A.B", "A;B", "\xc3\x84", "A\xc3\x84",
		"\t", "A\n",
	};
	char *max = name_of(ENV_NAME_MAX), *over = name_of(ENV_NAME_MAX + 1);

	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		cr_expect(env_name_valid(good[i], strlen(good[i])), "refused '%s'", good[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		cr_expect(!env_name_valid(bad[i], strlen(bad[i])), "accepted '%s'", bad[i]);
	cr_expect(env_name_valid(max, strlen(max)));
	cr_expect(!env_name_valid(over, strlen(over)));
	/* Only the first n bytes count: "PATH=x" with n = 4 is PATH; a NUL
	 * inside the n bytes is refused. */
	cr_expect(env_name_valid("PATH=/bin", 4));
	cr_expect(!env_name_valid("PATH=/bin", 5));
	cr_expect(!env_name_valid("AB\0C", 4));
	cr_expect(!env_name_valid(NULL, 0));
	free(max);
	free(over);
}

/* A name the config took must survive the stored policy: before one rule,
 * a 256-byte [sandbox] env name was accepted by hqt.ini, written into
 * sessions.sandbox_json, and refused when read back, so the session could
 * never resume. */
Test(util, the_stored_policy_takes_back_every_name_the_rule_accepts)
{
	char *max = name_of(ENV_NAME_MAX), *over = name_of(ENV_NAME_MAX + 1), *err = NULL;
	char *json = xasprintf("{\"fs\":\"rw\",\"net\":true,\"env\":[\"%s\"]}", max);
	struct sandbox_policy p;

	sandbox_policy_init(&p);
	cr_assert_eq(sandbox_policy_from_json(&p, json, strlen(json), &err), 0, "%s", err);
	cr_assert_eq(p.env_names.n, 1);
	free(json);
	json = xasprintf("{\"fs\":\"rw\",\"net\":true,\"env\":[\"%s\"]}", over);
	cr_assert_eq(sandbox_policy_from_json(&p, json, strlen(json), &err), -1);
	cr_assert_str_eq(err, "sandbox policy: env[0] is not a variable name");
	sandbox_policy_free(&p);
	free(json);
	free(err);
	free(max);
	free(over);
}

/*
 * text_cell, a cell of hqt's tables: counted in the environment's character
 * classes, which it reads at its first call (main no longer does: text.c).
 * A wide character is two columns, a cut ends in "…", and the rest is
 * padded with spaces to the width.
 */
Test(util, text_cell_counts_columns_in_the_environments_locale)
{
	char *c;

	setenv("LC_ALL", "C.UTF-8", 1);
	c = text_cell("日本語の名前", 7);
	cr_assert_str_eq(c, "日本語…");
	free(c);
	c = text_cell("日本", 4);
	cr_assert_str_eq(c, "日本");
	free(c);
	c = text_cell("ab", 4);
	cr_assert_str_eq(c, "ab  ");
	free(c);
}
