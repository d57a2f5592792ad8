/* json-out.c: printing --json documents the same way everywhere. */
#include "json-out.h"
#include "gitstore.h"
#include "json-text.h"

#include <string.h>
#include "cmd.h"
#include "db.h"
#include "session.h"

#include <stdio.h>
#include <stdlib.h>

/* doc written to stdout with a newline, and freed: by json_text
 * (jansson's JSON_INDENT(2) form; jansson's own dump was a third of a
 * 100-session list's instructions), or ASCII-only by jansson. */
static int
print_doc(json_t *doc, bool ascii)
{
	char *s;

	if (doc == NULL) {
		cmd_error("cannot build the JSON document");
		return -1;
	}
	s = ascii ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII)
		  : json_text(doc);
	json_decref(doc);
	if (s == NULL) {
		cmd_error("cannot encode the JSON document");
		return -1;
	}
	puts(s);
	free(s);
	return 0;
}

int
json_print(json_t *doc)
{
	return print_doc(doc, false);
}

int
json_print_ascii(json_t *doc)
{
	return print_doc(doc, true);
}

int
json_print_text(struct json_writer *w)
{
	char *s = jw_finish(w);
	int rc = puts(s) >= 0 ? 0 : -1;

	free(s);
	if (rc != 0)
		cmd_error("cannot write the JSON document");
	return rc;
}

json_t *
json_string_or_null(const char *s)
{
	/* jansson refuses invalid UTF-8; fall back to a lossy copy rather than
	 * dropping the whole document. */
	json_t *j;

	if (s == NULL)
		return json_null();
	j = json_string(s);
	if (j == NULL) {
		char *copy = xstrdup(s);
		for (char *p = copy; *p; p++)
			if ((unsigned char)*p >= 0x80)
				*p = '?';
		j = json_string(copy);
		free(copy);
	}
	return j;
}

json_t *
json_strv(char *const *v)
{
	json_t *a = json_array();

	for (; v != NULL && *v != NULL; v++)
		json_array_append_new(a, json_string_or_null(*v));
	return a;
}

void
json_session_write(struct json_writer *w, const struct db_session *s, const char *status,
		   const char *attention)
{
	char window[32];
	bool fs_rw;
	int net;

	snprintf(window, sizeof window, "hqt-%lld", s->id);
	jw_open(w, '{');
	jw_key(w, "id");
	jw_int(w, s->id);
	jw_key(w, "nickname");
	jw_str(w, s->nickname);
	jw_key(w, "project");
	jw_str(w, s->project);
	jw_key(w, "project_path");
	jw_str(w, s->project_path);
	jw_key(w, "harness");
	jw_str(w, s->harness);
	jw_key(w, "model");
	jw_str(w, s->model);
	jw_key(w, "harness_session_id");
	jw_str(w, s->harness_session_id);
	jw_key(w, "status");
	jw_str(w, status);
	jw_key(w, "attention");
	jw_str(w, attention);
	/* needs you, and not looked at (attached to) since it began to */
	jw_key(w, "unseen");
	jw_bool(w, attention != NULL && strcmp(attention, "needs_input") == 0 &&
			   s->attention_since > s->seen_at);
	jw_key(w, "window");
	jw_str(w, window);
	jw_key(w, "sandbox");
	if (session_sandbox(s, &fs_rw, &net) == 1) {
		jw_open(w, '{');
		jw_key(w, "fs");
		jw_str(w, fs_rw ? "rw" : "ro");
		jw_key(w, "net");
		jw_bool(w, net == CONFIG_NET_ON);
		if (net == CONFIG_NET_ALLOW) {
			struct strv l = STRV_INIT;

			session_net_list(s, &l);
			jw_key(w, "net_allow");
			jw_open(w, '[');
			for (size_t i = 0; i < l.n; i++)
				jw_str(w, l.v[i]);
			jw_close(w, ']');
			strv_clear(&l);
		}
		jw_close(w, '}');
	} else
		jw_null(w);
	jw_key(w, "exit_message");
	jw_str(w, s->exit_message);
	jw_key(w, "worktree");
	jw_str(w, s->worktree);
	jw_key(w, "branch");
	jw_str(w, s->branch);
	if (s->git_store != NULL && s->branch != NULL) {
		/* Read as data: no git runs in the store (gitstore.h). */
		struct gitstore_at at = { s->project_path, s->worktree, s->git_store, s->branch,
					  NULL };
		struct gitstore_look look;

		gitstore_look(&at, &look);
		jw_key(w, "git_store");
		jw_open(w, '{');
		jw_key(w, "path");
		jw_str(w, s->git_store);
		jw_key(w, "state");
		jw_str(w, gitstore_state_name(look.state));
		jw_key(w, "tip");
		jw_str(w, look.tip[0] ? look.tip : NULL);
		jw_key(w, "head_elsewhere");
		jw_str(w, look.head[0] ? look.head : NULL);
		jw_close(w, '}');
	}
	jw_close(w, '}');
}

json_t *
json_session(const struct db_session *s, const char *status, const char *attention,
	     char *const *argv)
{
	struct json_writer w;
	json_t *o;
	char *text;

	/* One list of the fields: the writer's, read back (show's one session). */
	jw_init(&w);
	json_session_write(&w, s, status, attention);
	text = jw_finish(&w);
	o = json_loads(text, 0, NULL);
	free(text);
	if (o == NULL)
		return NULL;
	if (argv != NULL)
		json_object_set_new_nocheck(o, "argv", json_strv(argv));
	return o;
}
