/* fixture.c: one source for every bad-plugin fixture; each DEFECT_* macro
 * builds a .so with exactly one thing wrong with it. */
#include <hqt/plugin.h>

#include <stddef.h>
#include <stdint.h>

#ifdef DEFECT_UNDEFINED_SYMBOL
/* Resolved at dlopen(RTLD_NOW) time and missing everywhere: dlopen fails. */
extern int hqt_fixture_no_such_function(void);
int hqt_fixture_use(void);
HQT_PLUGIN_EXPORT int hqt_fixture_use(void) { return hqt_fixture_no_such_function(); }
#endif

static int __attribute__((unused))
spawn(const struct hqt_ctx *ctx, const struct hqt_request *req, struct hqt_cmd *out,
      struct hqt_error *err)
{
	(void)err;
	ctx->host->argv_push(out, "true");
	ctx->host->set_cwd(out, req->project_path);
	return HQT_OK;
}

#ifndef FIXTURE_NAME
#define FIXTURE_NAME "fixture"
#endif

#if defined(FIXTURE_RETURNS)
/*
 * The return values of the id calls, as FIXTURE_RETURNS's ABI minor means
 * them: before 1.4, 1 was both "the harness picks its own id" and "found",
 * and 0 "not yet"; from 1.4 each has a value of its own.  The id asked for
 * is in the project path's last part: "found", "later", "none", "odd".
 */
static const char *
wish(const struct hqt_request *req)
{
	const char *p = req->project_path, *slash = p;

	for (; *p != '\0'; p++)
		if (*p == '/')
			slash = p + 1;
	return slash;
}

static int
same(const char *a, const char *b)
{
	while (*a != '\0' && *a == *b)
		a++, b++;
	return *a == *b;
}

static int
generate(const struct hqt_ctx *ctx, char *buf, size_t len, struct hqt_error *err)
{
	(void)ctx;
	(void)buf;
	(void)len;
	(void)err;
	return FIXTURE_RETURNS < 4 ? 1 : HQT_NONE;
}

static int
capture(const struct hqt_ctx *ctx, const struct hqt_request *req, char *buf, size_t len,
	struct hqt_error *err)
{
	const char *id = "0b0e6a3c-9f0e-4c1a-8d5e-2f1c3b4a5d6e";

	(void)ctx;
	(void)err;
	if (same(wish(req), "odd"))
		return 7;
	if (!same(wish(req), "found"))
		return FIXTURE_RETURNS < 4 ? 0 : HQT_NOT_YET;
	for (size_t i = 0; i < len; i++)
		if ((buf[i] = id[i]) == '\0')
			break;
	return FIXTURE_RETURNS < 4 ? 1 : HQT_OK;
}
#endif

#if defined(DEFECT_SMALL)
/* An old or broken plugin whose descriptor stops before build_spawn. */
struct small_desc {
	uint32_t abi_major, abi_minor;
	size_t struct_size;
	const char *name, *display_name;
};
static const struct small_desc desc = {
	HQT_PLUGIN_ABI_MAJOR, HQT_PLUGIN_ABI_MINOR, sizeof(struct small_desc),
	FIXTURE_NAME, "Small",
};
#else
static const struct hqt_plugin desc = {
#if defined(DEFECT_MAJOR)
	.abi_major = HQT_PLUGIN_ABI_MAJOR + 1,
#else
	.abi_major = HQT_PLUGIN_ABI_MAJOR,
#endif
#if defined(DEFECT_MINOR)
	.abi_minor = HQT_PLUGIN_ABI_MINOR + 1,
#elif defined(FIXTURE_RETURNS)
	.abi_minor = FIXTURE_RETURNS,
#else
	.abi_minor = HQT_PLUGIN_ABI_MINOR,
#endif
#if defined(DEFECT_SHORT)
	.struct_size = offsetof(struct hqt_plugin, generate_session_id),
#else
	.struct_size = sizeof(struct hqt_plugin),
#endif
#if defined(DEFECT_EMPTY_NAME)
	.name = "",
#else
	.name = FIXTURE_NAME,
#endif
	.display_name = "Fixture",
#if !defined(DEFECT_NO_SPAWN)
	.build_spawn = spawn,
#endif
	.build_resume = spawn,
#if defined(FIXTURE_RETURNS)
	.flags = HQT_PLUGIN_CAPTURES_SESSION_ID,
	.generate_session_id = generate,
	.capture_session_id = capture,
#endif
#if defined(DEFECT_SHORT)
	/* A descriptor that says it ends right after build_resume (an older
	 * plugin, or a lie), with junk where the later fields would be: the
	 * host must never read, let alone call, them. */
	.generate_session_id = (int (*)(const struct hqt_ctx *, char *, size_t,
					struct hqt_error *))(uintptr_t)1,
	.capture_session_id = (int (*)(const struct hqt_ctx *, const struct hqt_request *,
				       char *, size_t, struct hqt_error *))(uintptr_t)1,
	.parse_status = (enum hqt_status (*)(const struct hqt_ctx *, const char *,
					     size_t))(uintptr_t)1,
#endif
};
#endif

#ifndef DEFECT_NO_ENTRY
HQT_PLUGIN_EXPORT const struct hqt_plugin *
hqt_plugin_query(const struct hqt_host_api *host, struct hqt_error *err)
{
#ifdef DEFECT_NULL
	(void)desc;
	host->set_error(err, "this fixture always refuses");
	return NULL;
#else
	(void)host;
	(void)err;
	return (const struct hqt_plugin *)&desc;
#endif
}
#else
/* Exports something, just not the entry point. */
HQT_PLUGIN_EXPORT const void *hqt_plugin_query_misspelt(void);
HQT_PLUGIN_EXPORT const void *hqt_plugin_query_misspelt(void) { return &desc; }
#endif
