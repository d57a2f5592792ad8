/* fuzz-git-index.c: git_index_gitlinks on arbitrary bytes (an index a
 * session could not write, but read by hqt at every sandboxed start): it
 * must never read past the end, crash or leak; a refusal keeps nothing, and
 * every path it keeps is a non-empty string within the bound. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "fuzz-git-index: %s:%d: broken: %s\n",         \
				__FILE__, __LINE__, #cond);                           \
			abort();                                                      \
		}                                                                     \
	} while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strv out = STRV_INIT;
	/* A copy of exactly size bytes, so ASan sees a read past the end. */
	uint8_t *buf = malloc(size > 0 ? size : 1);
	int rc;

	memcpy(buf, data, size);
	rc = git_index_gitlinks(buf, size, &out);
	CHECK(rc >= -1 && rc <= 1);
	if (rc != 0)
		CHECK(out.n == 0);
	CHECK(out.n <= GIT_GITLINKS_MAX);
	for (size_t i = 0; i < out.n; i++)
		CHECK(out.v[i][0] != '\0' && strlen(out.v[i]) <= 4096);
	strv_clear(&out);
	free(buf);
	return 0;
}
