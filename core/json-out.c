/* json-out.c: printing --json documents the same way everywhere. */
#include "json-out.h"
#include "gitstore.h"

#include <string.h>
#include "cmd.h"
#include "db.h"
#include "session.h"

#include <stdio.h>
#include <stdlib.h>

int
json_print(json_t *doc)
{
	char *s;

	if (doc == NULL) {
		cmd_error("cannot build the JSON document");
		return -1;
	}
	s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (s == NULL) {
		cmd_error("cannot encode the JSON document");
		return -1;
	}
	puts(s);
	free(s);
	return 0;
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

json_t *
json_session(const struct db_session *s, const char *status, const char *attention,
	     char *const *argv)
{
	json_t *o = json_object(), *sb = json_null();
	char window[32];
	bool fs_rw;
	int net;

	if (session_sandbox(s, &fs_rw, &net) == 1) {
		sb = json_object();
		json_object_set_new_nocheck(sb, "fs", json_string_nocheck(fs_rw ? "rw" : "ro"));
		json_object_set_new_nocheck(sb, "net", json_boolean(net == CONFIG_NET_ON));
		if (net == CONFIG_NET_ALLOW) {
			struct strv l = STRV_INIT;
			json_t *a = json_array();
			session_net_list(s, &l);
			for (size_t i = 0; i < l.n; i++)
				json_array_append_new(a, json_string_or_null(l.v[i]));
			json_object_set_new_nocheck(sb, "net_allow", a);
			strv_clear(&l);
		}
	}
	/* The keys are these literals and the status names hqt's own ASCII:
	 * jansson need not check them for UTF-8 (about 2% of a 100-session
	 * list); what a user wrote goes through json_string_or_null. */
	snprintf(window, sizeof window, "hqt-%lld", s->id);
	json_object_set_new_nocheck(o, "id", json_integer(s->id));
	json_object_set_new_nocheck(o, "nickname", json_string_or_null(s->nickname));
	json_object_set_new_nocheck(o, "project", json_string_or_null(s->project));
	json_object_set_new_nocheck(o, "project_path", json_string_or_null(s->project_path));
	json_object_set_new_nocheck(o, "harness", json_string_or_null(s->harness));
	json_object_set_new_nocheck(o, "model", json_string_or_null(s->model));
	json_object_set_new_nocheck(o, "harness_session_id",
				    json_string_or_null(s->harness_session_id));
	json_object_set_new_nocheck(o, "status", json_string_nocheck(status));
	json_object_set_new_nocheck(o, "attention", json_string_or_null(attention));
	/* needs you, and not looked at (attached to) since it began to */
	json_object_set_new_nocheck(o, "unseen",
				    json_boolean(attention != NULL &&
						 strcmp(attention, "needs_input") == 0 &&
						 s->attention_since > s->seen_at));
	json_object_set_new_nocheck(o, "window", json_string_nocheck(window));
	json_object_set_new_nocheck(o, "sandbox", sb);
	json_object_set_new_nocheck(o, "exit_message", json_string_or_null(s->exit_message));
	json_object_set_new_nocheck(o, "worktree", json_string_or_null(s->worktree));
	json_object_set_new_nocheck(o, "branch", json_string_or_null(s->branch));
	if (s->git_store != NULL && s->branch != NULL) {
		/* Read as data: no git runs in the store (gitstore.h). */
		struct gitstore_at at = { s->project_path, s->worktree, s->git_store, s->branch,
					  NULL };
		struct gitstore_look look;
		json_t *g = json_object();

		gitstore_look(&at, &look);
		json_object_set_new_nocheck(g, "path", json_string_or_null(s->git_store));
		json_object_set_new_nocheck(g, "state",
					    json_string_nocheck(gitstore_state_name(look.state)));
		json_object_set_new_nocheck(g, "tip", json_string_or_null(look.tip[0] ? look.tip
									      : NULL));
		json_object_set_new_nocheck(g, "head_elsewhere",
					    json_string_or_null(look.head[0] ? look.head : NULL));
		json_object_set_new_nocheck(o, "git_store", g);
	}
	if (argv != NULL)
		json_object_set_new_nocheck(o, "argv", json_strv(argv));
	return o;
}
