# leechrt build. Files are found by convention, so adding a file needs no edit here:
#   util/ rt/ jit/ kernels/ layouts/ loader/ (and one level of subfolders): library code
#   *_test.c   a test program (test/t.h), linked with the library
#   *_fuzz.c   a libFuzzer target (LLVMFuzzerTestOneInput); also built as a gcc replayer
#   tools/*.c  one program each
#   templates/*.cu, *.cuh  CUDA sources embedded into the library for NVRTC
BUILD   ?= build
CC      ?= cc
CLANG   ?= clang
CUDA    ?= /usr/local/cuda
OPT     ?= -O2
DEPINC  ?=
CFLAGS  = -std=c11 $(OPT) -g -Wall -Wextra -Werror -Wno-format-truncation -D_GNU_SOURCE -I. -I$(BUILD)/gen -I$(CUDA)/include $(DEPINC) -pthread -fPIC -MMD -MP $(EXTRA_CFLAGS)
LDLIBS  = -lffi -lxxhash -ljansson -lz -ldl -lm -lpthread
FUZZFLAGS = -std=c11 -g -O1 -D_GNU_SOURCE -DLR_FUZZING -I. -I$(BUILD)/gen -I$(CUDA)/include $(DEPINC) -pthread -fsanitize=address,undefined -fno-sanitize-recover=undefined

LIBDIRS = util rt jit kernels layouts loader
LIBSRC  = $(filter-out %_test.c %_fuzz.c,$(foreach d,$(LIBDIRS),$(wildcard $(d)/*.c $(d)/*/*.c)))
TESTSRC = $(wildcard $(foreach d,$(LIBDIRS) test tools,$(d)/*_test.c $(d)/*/*_test.c))
FUZZSRC = $(wildcard $(foreach d,$(LIBDIRS) test,$(d)/*_fuzz.c $(d)/*/*_fuzz.c))
TOOLSRC = $(filter-out %_test.c,$(wildcard tools/*.c))
TEMPLATES = $(sort $(wildcard templates/*.cu templates/*.cuh))

LIBOBJ  = $(LIBSRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/templates_embed.o
LIB     = $(BUILD)/libleechrt.a
TESTS   = $(patsubst %.c,$(BUILD)/test/%,$(notdir $(TESTSRC)))
TOOLS   = $(patsubst tools/%.c,$(BUILD)/bin/%,$(TOOLSRC))
REPLAYS = $(patsubst %.c,$(BUILD)/fuzz/%-replay,$(notdir $(FUZZSRC)))
FUZZERS = $(patsubst %.c,$(BUILD)/fuzz/%,$(notdir $(FUZZSRC)))

SOLIB   = $(BUILD)/libleechrt.so

all: $(LIB) $(SOLIB) $(TOOLS) $(TESTS) $(REPLAYS) $(BUILD)/gen/embed_cache
fuzzers: $(FUZZERS)

$(BUILD)/gen/embed_templates: tools/build/embed_templates.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -Wall -Wextra -Werror -o $@ $<

$(BUILD)/gen/templates_embed.c: $(BUILD)/gen/embed_templates $(TEMPLATES)
	$(BUILD)/gen/embed_templates $@ $(TEMPLATES)

$(BUILD)/obj/gen/templates_embed.o: $(BUILD)/gen/templates_embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(OPT) -fPIC -c -o $@ $<

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIBOBJ)
	@rm -f $@
	ar rcs $@ $^

# The same objects (position-independent) as a shared library for embedding.
$(SOLIB): $(LIBOBJ)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/bin/%: $(BUILD)/obj/tools/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Tests and fuzz targets live beside the code: find their source by file name.
vpath %.c $(sort $(dir $(TESTSRC) $(FUZZSRC)))
$(BUILD)/test/%: %.c $(LIB)
	@mkdir -p $(dir $@) $(BUILD)/dep
	$(CC) $(CFLAGS) $(LDFLAGS) -MF $(BUILD)/dep/$*.d -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/fuzz/%-replay: %.c test/fuzz_replay.c $(LIB)
	@mkdir -p $(dir $@) $(BUILD)/dep
	$(CC) $(CFLAGS) $(LDFLAGS) -MF $(BUILD)/dep/$*-replay.d -o $@ $< test/fuzz_replay.c $(LIB) $(LDLIBS)

# libFuzzer builds: the library compiled once with clang and the sanitizers
# (coverage instrumented, no fuzzer main), then each target links against it.
FUZZOBJ = $(LIBSRC:%.c=$(BUILD)/fuzzobj/%.o) $(BUILD)/fuzzobj/gen/templates_embed.o
FUZZLIB = $(BUILD)/libleechrt-fuzz.a
# (-MMD: a header change rebuilds them too; without it an incremental `make
# fuzzers` linked objects of two struct layouts and crashed on valid input)
$(BUILD)/fuzzobj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZFLAGS) -MMD -MP -fsanitize=fuzzer-no-link -c -o $@ $<
$(BUILD)/fuzzobj/gen/templates_embed.o: $(BUILD)/gen/templates_embed.c
	@mkdir -p $(dir $@)
	$(CLANG) -std=c11 -O1 -c -o $@ $<
$(FUZZLIB): $(FUZZOBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/fuzz/%: %.c $(FUZZLIB)
	@mkdir -p $(dir $@) $(BUILD)/dep
	$(CLANG) $(FUZZFLAGS) -MMD -MP -MF $(BUILD)/dep/$*-fuzz.d -fsanitize=fuzzer -o $@ $< $(FUZZLIB) $(LDLIBS)

# An appliance launcher: the kernels of a warmed cache compiled into the
# binary, so it starts without NVRTC or a cache folder.
#   build/bin/cache --dir DIR warm --models 14B && make appliance CACHE=DIR
APPLIANCE = $(BUILD)/bin/leechrt-appliance
# (linked with the library: it checks entries with jit/cache.c's own reader;
# built by `all` too, for tools/cache_test.c)
$(BUILD)/gen/embed_cache: $(BUILD)/obj/tools/build/embed_cache.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
appliance: $(BUILD)/gen/embed_cache $(BUILD)/obj/tools/leechrt.o $(LIB) $(BUILD)/bin/cache
	@test -n "$(CACHE)" || { echo "make appliance CACHE=DIR (a warmed cubin cache)"; exit 2; }
	$(BUILD)/bin/cache --dir $(CACHE) verify
	$(BUILD)/gen/embed_cache $(CACHE) $(BUILD)/gen/embedded_cubins.c
	$(CC) $(CFLAGS) -c -o $(BUILD)/obj/gen/embedded_cubins.o $(BUILD)/gen/embedded_cubins.c
	$(CC) $(CFLAGS) $(LDFLAGS) -o $(APPLIANCE) $(BUILD)/obj/tools/leechrt.o $(BUILD)/obj/gen/embedded_cubins.o $(LIB) $(LDLIBS)

clean:
	rm -rf $(BUILD)

.PHONY: all fuzzers clean appliance
.SECONDARY:
-include $(shell find $(BUILD)/obj $(BUILD)/fuzzobj $(BUILD)/dep -name '*.d' 2>/dev/null)
