/* JIT-compiled hot code announced in a perf jitdump file, as LLVM-based JITs
 * (Julia, PostgreSQL's JIT, Numba, ...) announce theirs.
 *
 * The program builds two functions with the LLVM-C IRBuilder, with DWARF line
 * info (DIBuilder) pointing at a pseudo-C source text it writes itself, and
 * compiles them with ORC's LLJIT over an RTDyldObjectLinkingLayer that has
 * LLVM's PerfJITEventListener registered. The listener (LLVM built with
 * LLVM_USE_PERF, as Debian's is) writes, for each function, a
 * JIT_CODE_DEBUG_INFO record (file:line per address) then a JIT_CODE_LOAD
 * record (name, address, code bytes) to
 *   ${JITDUMPDIR:-${TMPDIR:-/tmp}}/.debug/jit/llvm-IR-jit-YYYYMMDD-XXXXXX/jit-PID.dump
 * and maps that file PROT_EXEC so that it shows in /proc/PID/maps.
 *
 * Call chain while spinning: main -> spin -> hot_caller -> hot_loop, the last
 * two JITted, all with frame pointers (the JITted ones get the function
 * attribute "frame-pointer"="all").
 *
 * usage: llvmjit [SECONDS [SRCFILE]]
 *   SECONDS  how long to call the JITted code (default 5)
 *   SRCFILE  where to write the source text the line info names (default
 *            ${TMPDIR:-/tmp}/llvmjit-PID.c); kept after exit
 * stdout, one key=value a line, flushed before spinning, then "ready":
 *   pid, src, jitdump (path of the mapped dump), hot_loop and hot_caller
 *   (addresses, hex), lines (hot_loop's body lines, "5,6")
 * exit 0; 1 on an LLVM error; 2 when no jitdump got mapped (a test skips). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Error.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/OrcEE.h>
#include <llvm-c/Target.h>

/* The source text, line for line: the line numbers below index it. */
static const char *const SRC[] = {
	/* 1 */ "/* llvmjit: the code that llvmjit JIT-compiles (LLVM IR built with the C API) */",
	/* 2 */ "uint64_t hot_loop(uint64_t n) {",
	/* 3 */ "\tuint64_t acc = 1;",
	/* 4 */ "\tfor (uint64_t i = 0; i < n; i++) {",
	/* 5 */ "\t\tacc = acc * 6364136223846793005 + i;",
	/* 6 */ "\t\tacc ^= acc >> 29;",
	/* 7 */ "\t}",
	/* 8 */ "\treturn acc;",
	/* 9 */ "}",
	/* 10 */ "",
	/* 11 */ "uint64_t hot_caller(uint64_t n) {",
	/* 12 */ "\treturn hot_loop(n) + 1;",
	/* 13 */ "}",
};
enum {
	L_LOOP_FN = 2, L_INIT = 3, L_FOR = 4, L_MUL = 5, L_XOR = 6, L_RET = 8,
	L_CALLER_FN = 11, L_CALL = 12,
};

#define STEPS_PER_CALL 1000000ull	/* hot_loop iterations a call: ~1-2 ms */

static int llvm_failed(LLVMErrorRef err, const char *what)
{
	if (!err)
		return 0;
	char *msg = LLVMGetErrorMessage(err);
	fprintf(stderr, "llvmjit: %s: %s\n", what, msg);
	LLVMDisposeErrorMessage(msg);
	return 1;
}

static int write_source(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "llvmjit: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(SRC) / sizeof(SRC[0]); i++)
		fprintf(f, "%s\n", SRC[i]);
	return fclose(f);
}

struct dbg {
	LLVMContextRef ctx;
	LLVMBuilderRef b;
	LLVMMetadataRef scope;
};

static void at(struct dbg *d, unsigned line)
{
	LLVMSetCurrentDebugLocation2(d->b,
		LLVMDIBuilderCreateDebugLocation(d->ctx, line, 1, d->scope, NULL));
}

static void jit_attrs(LLVMContextRef ctx, LLVMValueRef fn)
{
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
		LLVMCreateStringAttribute(ctx, "frame-pointer", 13, "all", 3));
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
		LLVMCreateEnumAttribute(ctx,
			LLVMGetEnumAttributeKindForName("noinline", 8), 0));
}

static LLVMMetadataRef subprogram(LLVMDIBuilderRef dib, LLVMMetadataRef cu,
				  LLVMMetadataRef file, LLVMMetadataRef fnty,
				  const char *name, unsigned line)
{
	return LLVMDIBuilderCreateFunction(dib, cu, name, strlen(name),
					   name, strlen(name), file, line, fnty,
					   0, 1, line, LLVMDIFlagZero, 1);
}

/* hot_loop and hot_caller, with line info into src (absolute path). */
static LLVMModuleRef build_module(LLVMContextRef ctx, const char *src)
{
	LLVMModuleRef m = LLVMModuleCreateWithNameInContext("llvmjit", ctx);
	LLVMTypeRef i64 = LLVMInt64TypeInContext(ctx);
	LLVMTypeRef fty = LLVMFunctionType(i64, &i64, 1, 0);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);

	LLVMAddModuleFlag(m, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
		LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx),
						 LLVMDebugMetadataVersion(), 0)));
	LLVMAddModuleFlag(m, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
		LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx), 4, 0)));

	const char *slash = strrchr(src, '/');
	const char *base = slash ? slash + 1 : src;
	size_t dirlen = slash ? (size_t)(slash - src) : 0;
	LLVMDIBuilderRef dib = LLVMCreateDIBuilder(m);
	const char *dir = dirlen ? src : slash ? "/" : ".";
	LLVMMetadataRef file = LLVMDIBuilderCreateFile(dib, base, strlen(base),
						       dir, dirlen ? dirlen : 1);
	LLVMMetadataRef cu = LLVMDIBuilderCreateCompileUnit(dib,
		LLVMDWARFSourceLanguageC, file, "tagprof llvmjit", 15, 1, "", 0, 0,
		"", 0, LLVMDWARFEmissionFull, 0, 0, 0, "", 0, "", 0);
	LLVMMetadataRef u64 = LLVMDIBuilderCreateBasicType(dib, "uint64_t", 8, 64,
							   0x08 /* DW_ATE_unsigned */,
							   LLVMDIFlagZero);
	LLVMMetadataRef params[2] = { u64, u64 };
	LLVMMetadataRef fnty = LLVMDIBuilderCreateSubroutineType(dib, file, params,
								 2, LLVMDIFlagZero);

	/* uint64_t hot_loop(uint64_t n) */
	LLVMValueRef loop_fn = LLVMAddFunction(m, "hot_loop", fty);
	jit_attrs(ctx, loop_fn);
	struct dbg d = { ctx, b, subprogram(dib, cu, file, fnty, "hot_loop", L_LOOP_FN) };
	LLVMSetSubprogram(loop_fn, d.scope);
	LLVMValueRef n = LLVMGetParam(loop_fn, 0);
	LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(ctx, loop_fn, "entry");
	LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(ctx, loop_fn, "for");
	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(ctx, loop_fn, "body");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(ctx, loop_fn, "done");

	LLVMPositionBuilderAtEnd(b, entry);
	at(&d, L_INIT);
	LLVMBuildBr(b, head);

	LLVMPositionBuilderAtEnd(b, head);
	at(&d, L_FOR);
	LLVMValueRef i = LLVMBuildPhi(b, i64, "i");
	LLVMValueRef acc = LLVMBuildPhi(b, i64, "acc");
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, i, n, "more"), body, done);

	LLVMPositionBuilderAtEnd(b, body);
	at(&d, L_MUL);
	LLVMValueRef x = LLVMBuildMul(b, acc,
		LLVMConstInt(i64, 6364136223846793005ull, 0), "mul");
	x = LLVMBuildAdd(b, x, i, "add");
	at(&d, L_XOR);
	x = LLVMBuildXor(b, x, LLVMBuildLShr(b, x, LLVMConstInt(i64, 29, 0), "sh"),
			 "acc.next");
	at(&d, L_FOR);
	LLVMValueRef inext = LLVMBuildAdd(b, i, LLVMConstInt(i64, 1, 0), "i.next");
	LLVMBuildBr(b, head);

	LLVMValueRef ivals[2] = { LLVMConstInt(i64, 0, 0), inext };
	LLVMValueRef avals[2] = { LLVMConstInt(i64, 1, 0), x };
	LLVMBasicBlockRef from[2] = { entry, body };
	LLVMAddIncoming(i, ivals, from, 2);
	LLVMAddIncoming(acc, avals, from, 2);

	LLVMPositionBuilderAtEnd(b, done);
	at(&d, L_RET);
	LLVMBuildRet(b, acc);

	/* uint64_t hot_caller(uint64_t n) { return hot_loop(n) + 1; } */
	LLVMValueRef caller_fn = LLVMAddFunction(m, "hot_caller", fty);
	jit_attrs(ctx, caller_fn);
	d.scope = subprogram(dib, cu, file, fnty, "hot_caller", L_CALLER_FN);
	LLVMSetSubprogram(caller_fn, d.scope);
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, caller_fn, "entry"));
	at(&d, L_CALL);
	LLVMValueRef arg = LLVMGetParam(caller_fn, 0);
	LLVMValueRef r = LLVMBuildCall2(b, fty, loop_fn, &arg, 1, "r");
	LLVMBuildRet(b, LLVMBuildAdd(b, r, LLVMConstInt(i64, 1, 0), "r1"));

	LLVMDIBuilderFinalize(dib);
	LLVMDisposeDIBuilder(dib);
	LLVMDisposeBuilder(b);

	char *why = NULL;
	if (LLVMVerifyModule(m, LLVMReturnStatusAction, &why)) {
		fprintf(stderr, "llvmjit: bad module: %s\n", why);
		LLVMDisposeMessage(why);
		LLVMDisposeModule(m);
		return NULL;
	}
	LLVMDisposeMessage(why);
	return m;
}

/* LLJIT's object layer: RuntimeDyld with the perf listener registered. */
static LLVMOrcObjectLayerRef perf_object_layer(void *listener,
					       LLVMOrcExecutionSessionRef es,
					       const char *triple)
{
	(void)triple;
	LLVMOrcObjectLayerRef layer =
		LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager(es);
	LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener(layer, listener);
	return layer;
}

/* The mapped jit-PID.dump, from /proc/self/maps, or "" */
static void find_jitdump(char *out, size_t len)
{
	char line[4096], want[32];
	FILE *f = fopen("/proc/self/maps", "r");

	out[0] = '\0';
	snprintf(want, sizeof(want), "/jit-%d.dump", (int)getpid());
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, want), *path = strchr(line, '/');
		if (p && path && strcmp(p + strlen(want), "\n") == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%s", path);
			break;
		}
	}
	if (f)
		fclose(f);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;

/* The C frame under the JITted ones. */
static __attribute__((noinline)) uint64_t spin(uint64_t (*fn)(uint64_t), double secs)
{
	uint64_t calls = 0;
	double end = now() + secs;

	do {
		sink += fn(STEPS_PER_CALL);
		calls++;
	} while (now() < end);
	return calls;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5.0;
	char srcbuf[4096], srcpath[4096], dump[4096];
	int rc = 1;

	if (argc > 2) {
		snprintf(srcbuf, sizeof(srcbuf), "%s", argv[2]);
	} else {
		const char *tmp = getenv("TMPDIR");
		snprintf(srcbuf, sizeof(srcbuf), "%s/llvmjit-%d.c",
			 tmp && *tmp ? tmp : "/tmp", (int)getpid());
	}
	if (write_source(srcbuf))
		return 1;
	if (!realpath(srcbuf, srcpath))
		snprintf(srcpath, sizeof(srcpath), "%s", srcbuf);

	LLVMInitializeNativeTarget();
	LLVMInitializeNativeAsmPrinter();

	LLVMJITEventListenerRef perf = LLVMCreatePerfJITEventListener();
	if (!perf) {
		fprintf(stderr, "llvmjit: LLVM has no perf JIT listener (built without LLVM_USE_PERF)\n");
		return 2;
	}

	LLVMOrcLLJITBuilderRef jb = LLVMOrcCreateLLJITBuilder();
	LLVMOrcLLJITBuilderSetObjectLinkingLayerCreator(jb, perf_object_layer, perf);
	LLVMOrcLLJITRef jit;
	if (llvm_failed(LLVMOrcCreateLLJIT(&jit, jb), "LLJIT"))	/* takes jb */
		return 1;

	LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
	LLVMModuleRef m = build_module(LLVMOrcThreadSafeContextGetContext(tsc), srcpath);
	if (!m) {
		LLVMOrcDisposeThreadSafeContext(tsc);
		goto out;
	}
	LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(m, tsc);
	LLVMOrcDisposeThreadSafeContext(tsc);	/* the module keeps it alive */
	if (llvm_failed(LLVMOrcLLJITAddLLVMIRModule(jit,
				LLVMOrcLLJITGetMainJITDylib(jit), tsm), "add module"))
		goto out;

	/* Looking a symbol up compiles and loads the module: the listener
	 * writes both functions' records then. */
	LLVMOrcExecutorAddress loop_addr, caller_addr;
	if (llvm_failed(LLVMOrcLLJITLookup(jit, &loop_addr, "hot_loop"), "lookup hot_loop") ||
	    llvm_failed(LLVMOrcLLJITLookup(jit, &caller_addr, "hot_caller"), "lookup hot_caller"))
		goto out;

	find_jitdump(dump, sizeof(dump));
	if (!dump[0]) {
		fprintf(stderr, "llvmjit: no jit-%d.dump mapped (see LLVM's message above)\n",
			(int)getpid());
		rc = 2;
		goto out;
	}
	printf("pid=%d\nsrc=%s\njitdump=%s\nhot_loop=0x%" PRIx64 "\nhot_caller=0x%" PRIx64
	       "\nlines=%d,%d\nready\n", (int)getpid(), srcpath, dump, loop_addr,
	       caller_addr, L_MUL, L_XOR);
	fflush(stdout);

	uint64_t calls = spin((uint64_t (*)(uint64_t))(uintptr_t)caller_addr, secs);
	printf("calls=%" PRIu64 "\n", calls);
	rc = 0;
out:
	if (llvm_failed(LLVMOrcDisposeLLJIT(jit), "dispose"))
		rc = 1;
	LLVMShutdown();	/* the listener unmaps and closes the dump */
	return rc;
}
