/* test-util.c: the small helpers every part of hqt shares; here the one rule
 * for an environment variable's name, and that the config, the stored
 * sandbox policy and the sandbox's environment all apply it; a table
 * cell's width; hostile text made fit to show. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "json-text.h"
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

/* code point -> UTF-8 into buf (4 bytes and a NUL at most). */
static const char *
utf8(unsigned cp, char buf[5])
{
	if (cp < 0x80) {
		buf[0] = (char)cp;
		buf[1] = '\0';
	} else if (cp < 0x800) {
		buf[0] = (char)(0xc0 | cp >> 6);
		buf[1] = (char)(0x80 | (cp & 0x3f));
		buf[2] = '\0';
	} else if (cp < 0x10000) {
		buf[0] = (char)(0xe0 | cp >> 12);
		buf[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		buf[2] = (char)(0x80 | (cp & 0x3f));
		buf[3] = '\0';
	} else {
		buf[0] = (char)(0xf0 | cp >> 18);
		buf[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		buf[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		buf[3] = (char)(0x80 | (cp & 0x3f));
		buf[4] = '\0';
	}
	return buf;
}

/*
 * Text an agent controls (a pane's lines, an exit message) is shown
 * through text_escape: the bidi controls and invisible format characters
 * are dropped, so "abc<U+202E>def" cannot show as "abcfed" (issue 20
 * item 7); their neighbours are kept; escapes and bytes that are no
 * UTF-8 (overlong forms too, which could spell a dropped character
 * another way) are still shown escaped.
 */
Test(util, text_escape_drops_bidi_and_invisible_characters)
{
	static const unsigned gone[][2] = {
		{ 0x00ad, 0x00ad }, { 0x061c, 0x061c }, { 0x180e, 0x180e },
		{ 0x200b, 0x200f }, { 0x202a, 0x202e }, { 0x2060, 0x2064 },
		{ 0x2066, 0x2069 }, { 0x206a, 0x206f }, { 0xfeff, 0xfeff },
		{ 0xfff9, 0xfffb }, { 0xe0000, 0xe007f },
	};
	static const unsigned kept[] = {
		0x00ac, 0x00ae, 0x061b, 0x180d, 0x200a, 0x2010, 0x2029, 0x202f,
		0x205f, 0xfefe, 0xfff8, 0xfffc, 0xfffd, 0xe0080, 0xe0100, 0x05d0, 0x1f600,
	};
	char buf[5], *in, *out;

	out = text_escape("abc\xe2\x80\xae" "def", 0);
	cr_expect_str_eq(out, "abcdef");
	free(out);
	/* the isolate a "Trojan Source" line uses, around a comment's end */
	out = text_escape("x\xe2\x81\xa6/* \xe2\x81\xa9 */\xe2\x80\x8b\xef\xbb\xbfy", 0);
	cr_expect_str_eq(out, "x/*  */y");
	free(out);
	for (size_t i = 0; i < ARRAY_SIZE(gone); i++)
		for (unsigned cp = gone[i][0]; cp <= gone[i][1]; cp++) {
			in = xasprintf("a%sb", utf8(cp, buf));
			out = text_escape(in, 0);
			cr_expect_str_eq(out, "ab", "U+%04X kept", cp);
			free(out);
			free(in);
		}
	for (size_t i = 0; i < ARRAY_SIZE(kept); i++) {
		in = xasprintf("a%sb", utf8(kept[i], buf));
		out = text_escape(in, 0);
		cr_expect_str_eq(out, in, "U+%04X dropped", kept[i]);
		free(out);
		free(in);
	}
	/* escapes as before */
	out = text_escape("\x1b[31mred\x1b]52;c;eA==\a\n\xc2\x9b", 0);
	cr_expect_str_eq(out, "\\x1b[31mred\\x1b]52;c;eA==\\x07\\n\\xc2\\x9b");
	free(out);
	/* overlong (U+202E in four bytes), a surrogate, past U+10FFFF: bytes */
	out = text_escape("a\xf0\x82\x80\xae" "b\xed\xa0\x80" "c\xf4\x90\x80\x80" "d", 0);
	cr_expect_str_eq(out, "a\\xf0\\x82\\x80\\xaeb\\xed\\xa0\\x80" "c\\xf4\\x90\\x80\\x80" "d");
	free(out);
	/* and a table's cell, which shows through it */
	setenv("LC_ALL", "C.UTF-8", 1);
	out = text_cell("ab\xe2\x80\xae" "cd", 5);
	cr_expect_str_eq(out, "abcd ");
	free(out);
}

/* json_text prints what json_dumps(JSON_INDENT(2) | JSON_PRESERVE_ORDER)
 * does, byte for byte: nesting, empty containers, every escape, UTF-8, the
 * integer range, keys in insertion order; a real is jansson's own. */
Test(util, json_text_is_janssons_indented_form)
{
	char all[0x21];
	json_t *docs[7], *o, *a, *deep;

	for (int c = 1; c < 0x20; c++)
		all[c - 1] = (char)c;
	all[0x1f] = '"';
	all[0x20] = '\0';
	o = json_object();
	json_object_set_new(o, "zeta", json_integer(-9223372036854775807LL - 1));
	json_object_set_new(o, "alpha", json_string(all));
	json_object_set_new(o, "caf\xc3\xa9 \"q\" \\ /",
			    json_string("\xe6\x97\xa5\xe6\x9c\xac \xe2\x80\xae/"));
	json_object_set_new(o, "empty_o", json_object());
	json_object_set_new(o, "empty_a", json_array());
	json_object_set_new(o, "t", json_true());
	json_object_set_new(o, "f", json_false());
	json_object_set_new(o, "n", json_null());
	a = json_array();
	json_array_append_new(a, json_integer(9223372036854775807LL));
	json_array_append_new(a, json_array());
	json_array_append_new(a, json_pack("{s:[i,{s:s}]}", "k", 1, "x", "y\x7f"));
	json_object_set_new(o, "nested", a);
	docs[0] = o;
	docs[1] = json_array();
	docs[2] = json_object();
	docs[3] = json_pack("[{s:i,s:n},{s:s}]", "id", 1, "nickname", "status", "waiting");
	docs[4] = json_pack("{s:f}", "real", 0.1);
	docs[5] = json_pack("[[[[]]],{s:{}}]", "deep");
	/* Deeper than the writer's stack, siblings after: jansson's dump. */
	deep = json_integer(1);
	for (int i = 0; i < 40; i++) {
		json_t *up = json_array();
		json_array_append_new(up, deep);
		deep = up;
	}
	docs[6] = json_pack("[{s:o,s:[i,i]},{s:i}]", "x", deep, "y", 3, 4, "id", 2);
	for (size_t i = 0; i < ARRAY_SIZE(docs); i++) {
		char *want = json_dumps(docs[i], JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		char *got = json_text(docs[i]);

		cr_assert_not_null(want);
		cr_assert_not_null(got, "document %zu", i);
		cr_expect_str_eq(got, want, "document %zu", i);
		free(want);
		free(got);
		json_decref(docs[i]);
	}
	cr_expect_null(json_text(NULL));
}

/* The writer (jw_*) prints what jansson prints for the same document, and
 * a string that is not valid UTF-8 as json_string_or_null keeps it: bytes
 * from 0x80 up as '?' (an overlong form, a surrogate, a byte cut short). */
Test(util, json_writer_is_janssons_form_and_lossy_like_it)
{
	static const char *const bad[] = { "a\xc0\xafz", "a\xed\xa0\x80z", "a\xe6\x97z",
					   "\xff", "ok \xe6\x97\xa5" };
	struct json_writer w;
	json_t *doc = json_array(), *o = json_object();
	char *want, *got;

	jw_init(&w);
	jw_open(&w, '[');
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		json_t *j = json_string(bad[i]);

		if (j == NULL) {
			char *copy = xstrdup(bad[i]);
			for (char *c = copy; *c; c++)
				if ((unsigned char)*c >= 0x80)
					*c = '?';
			j = json_string(copy);
			free(copy);
		}
		json_array_append_new(doc, j);
		jw_str(&w, bad[i]);
	}
	jw_open(&w, '{');
	jw_key(&w, "e");
	jw_open(&w, '[');
	jw_close(&w, ']');
	jw_key(&w, "n");
	jw_str(&w, NULL);
	jw_key(&w, "i");
	jw_int(&w, -7);
	jw_key(&w, "b");
	jw_bool(&w, false);
	jw_close(&w, '}');
	jw_open(&w, '{');
	jw_close(&w, '}');
	jw_close(&w, ']');
	json_object_set_new(o, "e", json_array());
	json_object_set_new(o, "n", json_null());
	json_object_set_new(o, "i", json_integer(-7));
	json_object_set_new(o, "b", json_false());
	json_array_append_new(doc, o);
	json_array_append_new(doc, json_object());
	want = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	got = jw_finish(&w);
	cr_expect_str_eq(got, want);
	free(want);
	free(got);
	json_decref(doc);
}
