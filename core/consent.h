/* consent.h: the user's one consent to sandboxed sessions running their
 * harness with its permission prompts skipped (issue 10, SPEC §4). */
#ifndef HQT_CONSENT_H
#define HQT_CONSENT_H

#include <stdbool.h>

/* What the user agrees to, for the CLI and the TUI to show. */
extern const char consent_text[];

/* Whether the user agreed ($XDG_DATA_HOME/hqt/consent). */
bool consent_given(void);
/* Record it (0), or forget it (revoke); -1 with *err. */
int consent_record(bool revoke, char **err);

#endif
