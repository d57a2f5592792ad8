/* dialog.c: the state of the TUI's dialogs (new session with its sandbox
 * controls, add project) and what their keys do.  What they start from is
 * gathered by actions.c; what they submit, actions.c does. */
#include "config.h"
#include "project.h"
#include "state.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static const struct tui_action none = { ACT_NONE, 0 };

static bool
is_enter(int key)
{
	return key == '\r' || key == '\n' || key == TK_KEYPAD_ENTER;
}

/* ---- new session ---- */

/*
 * [sessions] worktree in the dialog: always on, never off, and ask (the
 * default) on for a sandboxed writable session, as hqt new decides, while
 * the user has not chosen (then the switch follows the sandbox controls).
 */
static void
worktree_follow(struct new_dialog *nd)
{
	if (!nd->worktree_ok) {
		nd->worktree = false;
		return;
	}
	if (nd->worktree_touched)
		return;
	switch (nd->worktree_mode) {
	case CONFIG_WORKTREE_ALWAYS: nd->worktree = true; break;
	case CONFIG_WORKTREE_NEVER: nd->worktree = false; break;
	default: nd->worktree = nd->sandbox && nd->fs_rw; break;
	}
}

void
dialog_new_free(struct new_dialog *nd)
{
	free(nd->project);
	free(nd->reason);
	free(nd->fix);
	memset(nd, 0, sizeof *nd);
}

void
dialog_new_open(struct tui_state *t, const struct new_dialog_init *in)
{
	struct new_dialog *nd = &t->nd;

	dialog_new_free(nd);
	nd->project_id = in->project_id;
	nd->project = xstrdup(in->project);
	nd->harness = t->last_harness < t->nharnesses ? t->last_harness : 0;
	field_set(&nd->nickname, NULL);
	field_set(&nd->model, NULL);
	nd->sandbox_ok = in->sandbox_ok;
	if (!nd->sandbox_ok) {
		nd->reason = xstrdup(in->reason != NULL ? in->reason : "unknown reason");
		nd->fix = in->fix != NULL ? xstrdup(in->fix) : NULL;
	}
	nd->sandbox = in->sandbox_default && nd->sandbox_ok;
	nd->default_on = in->sandbox_default && !nd->sandbox_ok;
	nd->fs_rw = in->fs_rw_default;
	nd->net = in->net_default;
	nd->worktree_mode = in->worktree_default;
	nd->worktree_ok = in->git && in->git_commit;
	nd->worktree_why = !in->git ? "not a git repository" : !in->git_commit ? "no commit yet" : NULL;
	worktree_follow(nd);
	nd->focus = NF_HARNESS;
	t->mode = MODE_NEW;
}

bool
dialog_new_enabled(const struct new_dialog *nd, int fld)
{
	switch (fld) {
	case NF_SANDBOX: return nd->sandbox_ok;
	case NF_FS:
	case NF_NET: return nd->sandbox_ok && nd->sandbox;
	case NF_WORKTREE: return nd->worktree_ok;
	default: return true;
	}
}

static void
nf_move(struct new_dialog *nd, int dir)
{
	int f = nd->focus;

	for (int i = 0; i < NF_COUNT; i++) {
		f = (f + dir + NF_COUNT) % NF_COUNT;
		if (dialog_new_enabled(nd, f))
			break;
	}
	nd->focus = f;
}

static struct tui_action
new_cancel(struct tui_state *t)
{
	t->mode = MODE_MAIN;
	dialog_new_free(&t->nd);
	return none;
}

struct tui_action
dialog_new_key(struct tui_state *t, int key)
{
	struct new_dialog *nd = &t->nd;
	size_t nh = t->nharnesses;
	struct field *fl = nd->focus == NF_NICKNAME ? &nd->nickname
			 : nd->focus == NF_MODEL ? &nd->model : NULL;
	struct tui_action submit = { ACT_NEW_SUBMIT, 0 };

	if (key == TK_ESC)
		return new_cancel(t);
	if (is_enter(key))
		return nd->focus == NF_CANCEL ? new_cancel(t) : submit;
	if (key == TK_TAB || key == TK_DOWN) {
		nf_move(nd, 1);
		return none;
	}
	if (key == TK_BTAB || key == TK_UP) {
		nf_move(nd, -1);
		return none;
	}
	if (fl != NULL) {
		field_key(fl, key);
		return none;
	}
	bool space = key == ' ', left = key == TK_LEFT, right = key == TK_RIGHT;
	switch (nd->focus) {
	case NF_HARNESS:
		if (nh > 0 && (space || right))
			nd->harness = (nd->harness + 1) % nh;
		else if (nh > 0 && left)
			nd->harness = (nd->harness + nh - 1) % nh;
		break;
	case NF_SANDBOX:
		if ((space || left || right) && nd->sandbox_ok)
			nd->sandbox = !nd->sandbox;
		worktree_follow(nd);
		break;
	case NF_FS:
		if (space || left || right)
			nd->fs_rw = left ? true : right ? false : !nd->fs_rw;
		worktree_follow(nd);
		break;
	case NF_WORKTREE:
		if ((space || left || right) && nd->worktree_ok) {
			nd->worktree = !nd->worktree;
			nd->worktree_touched = true;
		}
		break;
	case NF_NET:
		if (space || left || right)
			/* allow, on, off: the arrows move, space goes round */
			nd->net = left ? (nd->net == CONFIG_NET_OFF ? CONFIG_NET_ON : CONFIG_NET_ALLOW)
				: right ? (nd->net == CONFIG_NET_ALLOW ? CONFIG_NET_ON : CONFIG_NET_OFF)
				: nd->net == CONFIG_NET_ON ? CONFIG_NET_OFF
				: nd->net == CONFIG_NET_OFF ? CONFIG_NET_ALLOW : CONFIG_NET_ON;
		break;
	case NF_CREATE:
		if (space)
			return submit;
		if (left || right)
			nd->focus = NF_CANCEL;
		break;
	case NF_CANCEL:
		if (space)
			return new_cancel(t);
		if (left || right)
			nd->focus = NF_CREATE;
		break;
	default:
		break;
	}
	return none;
}

/* ---- add project ---- */

void
dialog_project_open(struct tui_state *t, const char *cwd)
{
	struct project_dialog *pd = &t->pd;
	/* Suggest the directory hqt runs in, named after itself. */
	const char *base = strrchr(cwd, '/');

	memset(pd, 0, sizeof *pd);
	base = base != NULL ? base + 1 : cwd;
	field_set(&pd->name, project_name_valid(base) ? base : NULL);
	field_set(&pd->path, cwd);
	pd->focus = PF_NAME;
	t->mode = MODE_PROJECT;
}

struct tui_action
dialog_project_key(struct tui_state *t, int key)
{
	struct project_dialog *pd = &t->pd;
	struct tui_action submit = { ACT_PROJECT_SUBMIT, 0 };

	if (key == TK_ESC) {
		t->mode = MODE_MAIN;
		return none;
	}
	if (is_enter(key)) {
		if (pd->focus != PF_CANCEL)
			return submit;
		t->mode = MODE_MAIN;
		return none;
	}
	if (key == TK_TAB || key == TK_DOWN) {
		pd->focus = (pd->focus + 1) % PF_COUNT;
		return none;
	}
	if (key == TK_BTAB || key == TK_UP) {
		pd->focus = (pd->focus + PF_COUNT - 1) % PF_COUNT;
		return none;
	}
	if (pd->focus == PF_NAME)
		field_key(&pd->name, key);
	else if (pd->focus == PF_PATH)
		field_key(&pd->path, key);
	else if (key == ' ') {
		if (pd->focus == PF_ADD)
			return submit;
		t->mode = MODE_MAIN;
	} else if (key == TK_LEFT || key == TK_RIGHT) {
		pd->focus = pd->focus == PF_ADD ? PF_CANCEL : PF_ADD;
	}
	return none;
}
