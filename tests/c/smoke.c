/* C smoke test of the cuzk ABI: compiled against include/cuzk.h, linked to the built library.
 * Usage: smoke <testdata-2k dir>. Exits non-zero on the first failed check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk.h"

static int failures = 0;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      failures++;                                          \
    }                                                      \
  } while (0)

static unsigned char *read_file(const char *dir, const char *name, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(*len ? *len : 1);
  if (fread(buf, 1, *len, f) != *len) exit(2);
  fclose(f);
  return buf;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <testdata dir>\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  CHECK(cuzk_abi_version() == CUZK_ABI_VERSION, "abi version %u", cuzk_abi_version());
  cuzk_init_logging("warn");

  char *err = NULL;
  CuzkEngine *engine = NULL;
  CuzkCode code = cuzk_engine_open("synthesis_workers = 1\n", &engine, &err);
  CHECK(code == CUZK_CODE_OK && engine != NULL, "open: %d %s", code, err ? err : "");
  cuzk_string_free(err);

  /* A 2 KiB WindowPoSt partition over the two test sectors. */
  size_t rlen, v0len, v1len;
  unsigned char *randomness = read_file(dir, "randomness.bin", &rlen);
  unsigned char *v0 = read_file(dir, "window-0.vanilla", &v0len);
  unsigned char *v1 = read_file(dir, "window-1.vanilla", &v1len);
  CuzkSlice vanilla[2] = {{v0, v0len}, {v1, v1len}};
  uint64_t job = 0;
  code = cuzk_submit_window_post(engine, 10, randomness, rlen, 1000, vanilla, 2, 0, &job, &err);
  CHECK(code == CUZK_CODE_OK, "submit window: %d %s", code, err ? err : "");
  cuzk_string_free(err);
  CuzkBytes proof = {0};
  CuzkTimings timings = {0};
  code = cuzk_await(engine, job, -1, &proof, &timings, &err);
  CHECK(code == CUZK_CODE_OK && proof.len == 192, "await window: %d len %zu %s", code, proof.len,
        err ? err : "");
  CHECK(timings.prove_ms > 0.0, "timings reported: prove %.1f ms", timings.prove_ms);
  cuzk_string_free(err);
  cuzk_bytes_free(&proof);
  CHECK(proof.ptr == NULL && proof.len == 0, "bytes_free resets the buffer");

  /* Bad calls: errors with messages, never a crash. */
  err = NULL;
  code = cuzk_submit_window_post(NULL, 10, randomness, rlen, 1000, vanilla, 2, 0, &job, &err);
  CHECK(code == CUZK_CODE_NULL_ARGUMENT && err && strstr(err, "engine"), "null engine: %d", code);
  cuzk_string_free(err);
  unsigned char garbage[64];
  memset(garbage, 0xAB, sizeof garbage);
  err = NULL;
  code = cuzk_submit_porep(engine, garbage, sizeof garbage, 5, 1, 1000, &job, &err);
  CHECK(code == CUZK_CODE_INVALID_INPUT && err, "garbage C1: %d", code);
  cuzk_string_free(err);
  err = NULL;
  code = cuzk_submit_window_post(engine, 77, randomness, rlen, 1000, vanilla, 2, 0, &job, &err);
  CHECK(code == CUZK_CODE_INVALID_INPUT && err && strstr(err, "77"), "unknown proof type: %d", code);
  cuzk_string_free(err);
  err = NULL;
  code = cuzk_await(engine, 999999, 0, &proof, NULL, &err);
  CHECK(code == CUZK_CODE_UNKNOWN_JOB, "unknown job: %d", code);
  cuzk_string_free(err);

  char *json = NULL;
  code = cuzk_status_json(engine, &json, NULL);
  CHECK(code == CUZK_CODE_OK && json && strstr(json, "\"completed\":1"), "status: %s", json ? json : "");
  cuzk_string_free(json);

  cuzk_engine_close(engine);
  cuzk_engine_close(NULL);
  free(randomness);
  free(v0);
  free(v1);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("c smoke test: ok\n");
  return 0;
}
