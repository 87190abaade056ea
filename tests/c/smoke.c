/* C smoke test of the cuzk ABI: compiled against include/cuzk.h, linked to the built library.
 * Usage: smoke <testdata-2k dir> [all|engine|default]: every check, or one of its two halves
 * (`make leak-test` runs the halves side by side under valgrind, which keeps each process on
 * one core). Exits non-zero when a check failed. */
#include <pthread.h>
#include <stdatomic.h>
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

/* What one racing thread does to the engine until a call says it is closed. */
enum race_role { RACE_STATUS, RACE_AWAIT, RACE_SUBMIT };

struct race {
  const CuzkEngine *engine;
  enum race_role role;
  uint64_t job;
  const unsigned char *randomness;
  size_t rlen;
  const CuzkSlice *vanilla;
  atomic_long *calls;
  CuzkCode last; /* the code of the call that ended the loop */
};

static void *race_close(void *arg) {
  struct race *r = arg;
  for (;;) {
    char *err = NULL;
    CuzkCode code;
    if (r->role == RACE_STATUS) {
      CuzkStatus status = {.struct_size = sizeof status};
      code = cuzk_status(r->engine, &status, &err);
    } else if (r->role == RACE_AWAIT) {
      CuzkBytes proof = {0};
      code = cuzk_await(r->engine, r->job, -1, &proof, NULL, &err);
      cuzk_bytes_free(&proof);
      if (code == CUZK_CODE_OK) code = CUZK_CODE_CLOSED; /* finished first: nothing to wait for */
    } else {
      uint64_t job = 0;
      code = cuzk_submit_window_post(r->engine, 10, r->randomness, r->rlen, 1000,
                                     r->vanilla, 2, 0, &job, &err);
      if (code == CUZK_CODE_OK) cuzk_job_release(r->engine, job, NULL);
    }
    cuzk_string_free(err);
    atomic_fetch_add(r->calls, 1);
    if (code != CUZK_CODE_OK) {
      r->last = code;
      return NULL;
    }
  }
}

/* cuzk_engine_close racing status, await and submit calls from other threads: every call
 * returns OK or CLOSED, nothing touches freed memory (valgrind runs this too), and the closed
 * handle is refused afterwards. */
static void close_races_calls(const unsigned char *randomness, size_t rlen,
                              const CuzkSlice *vanilla) {
  CuzkEngine *engine = NULL;
  char *err = NULL;
  CuzkCode code = cuzk_engine_open("synthesis_workers = 1\n", &engine, &err);
  CHECK(code == CUZK_CODE_OK, "open for the race: %d %s", code, err ? err : "");
  cuzk_string_free(err);
  uint64_t job = 0;
  code = cuzk_submit_window_post(engine, 10, randomness, rlen, 1000, vanilla, 2, 0, &job, NULL);
  CHECK(code == CUZK_CODE_OK, "submit for the race: %d", code);

  enum { THREADS = 5 };
  atomic_long calls = 0;
  struct race races[THREADS];
  pthread_t threads[THREADS];
  enum race_role roles[THREADS] = {RACE_STATUS, RACE_STATUS, RACE_AWAIT, RACE_SUBMIT, RACE_STATUS};
  for (int i = 0; i < THREADS; i++) {
    races[i] = (struct race){engine, roles[i], job, randomness, rlen, vanilla, &calls, CUZK_CODE_OK};
    pthread_create(&threads[i], NULL, race_close, &races[i]);
  }
  /* Close while the status threads are calling (they never stop on their own). */
  while (atomic_load(&calls) < 200) {
  }
  err = NULL;
  code = cuzk_engine_close(engine, &err);
  CHECK(code == CUZK_CODE_OK, "close under load: %d %s", code, err ? err : "");
  cuzk_string_free(err);
  for (int i = 0; i < THREADS; i++) {
    pthread_join(threads[i], NULL);
    CHECK(races[i].last == CUZK_CODE_CLOSED, "racing thread %d (role %d) ended with %d", i,
          (int)races[i].role, races[i].last);
  }
  CuzkStatus status = {.struct_size = sizeof status};
  err = NULL;
  code = cuzk_status(engine, &status, &err);
  CHECK(code == CUZK_CODE_CLOSED && err && strstr(err, "closed"), "status after close: %d %s",
        code, err ? err : "");
  cuzk_string_free(err);
  err = NULL;
  code = cuzk_engine_close(engine, &err);
  CHECK(code == CUZK_CODE_CLOSED && err, "second close: %d", code);
  cuzk_string_free(err);
  /* A made-up handle is refused, not dereferenced. */
  code = cuzk_status((const CuzkEngine *)(uintptr_t)0x1000, &status, NULL);
  CHECK(code == CUZK_CODE_CLOSED, "forged handle: %d", code);
}

/* The engine API on an engine of its own: submit, await, timings, bad calls, status, versioned
 * structs, close (and close racing other calls), planning. */
static void engine_checks(const unsigned char *randomness, size_t rlen,
                          const CuzkSlice *vanilla) {
  char *err = NULL;
  CuzkEngine *engine = NULL;
  CuzkCode code = cuzk_engine_open("synthesis_workers = 1\n", &engine, &err);
  CHECK(code == CUZK_CODE_OK && engine != NULL, "open: %d %s", code, err ? err : "");
  cuzk_string_free(err);

  uint64_t job = 0;
  code = cuzk_submit_window_post(engine, 10, randomness, rlen, 1000, vanilla, 2, 0, &job, &err);
  CHECK(code == CUZK_CODE_OK, "submit window: %d %s", code, err ? err : "");
  cuzk_string_free(err);
  CuzkBytes proof = {0};
  /* A timings struct without its size is refused before waiting: the result stays there. */
  CuzkTimings unsized = {0};
  code = cuzk_await(engine, job, -1, &proof, &unsized, &err);
  CHECK(code == CUZK_CODE_INVALID_INPUT && err && strstr(err, "struct_size") && proof.len == 0,
        "await with timings.struct_size 0: %d %s", code, err ? err : "");
  cuzk_string_free(err);
  err = NULL;
  CuzkTimings timings = {.struct_size = sizeof timings};
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
  /* A timeout and a cancel from C: a job just submitted cannot have finished, so a zero
   * timeout times out (the job goes on), and once cancelled it ends CANCELLED. */
  uint64_t slow_job = 0;
  code = cuzk_submit_window_post(engine, 10, randomness, rlen, 1000, vanilla, 2, 0, &slow_job, NULL);
  CHECK(code == CUZK_CODE_OK, "submit for cancel: %d", code);
  err = NULL;
  code = cuzk_await(engine, slow_job, 0, &proof, NULL, &err);
  CHECK(code == CUZK_CODE_TIMEOUT && err && proof.len == 0, "await with timeout 0: %d", code);
  cuzk_string_free(err);
  code = cuzk_cancel(engine, slow_job, NULL);
  CHECK(code == CUZK_CODE_OK, "cancel: %d", code);
  err = NULL;
  code = cuzk_await(engine, slow_job, -1, &proof, NULL, &err);
  CHECK(code == CUZK_CODE_CANCELLED && err && proof.len == 0, "await of a cancelled job: %d", code);
  cuzk_string_free(err);
  err = NULL;
  code = cuzk_cancel(engine, slow_job, &err); /* its result was taken: unknown now */
  CHECK(code == CUZK_CODE_UNKNOWN_JOB && err, "cancel of an awaited job: %d", code);
  cuzk_string_free(err);

  /* Lengths no buffer can have, a null pointer with a length, a null output: refused before
   * anything is read or written. */
  uint64_t bad_job = 0;
  err = NULL;
  code = cuzk_submit_window_post(engine, 10, randomness, SIZE_MAX, 1000, vanilla, 2, 0, &bad_job, &err);
  CHECK(code == CUZK_CODE_INVALID_INPUT && err && strstr(err, "larger than any buffer"),
        "randomness length SIZE_MAX: %d %s", code, err ? err : "");
  cuzk_string_free(err);
  err = NULL;
  code = cuzk_submit_window_post(engine, 10, randomness, rlen, 1000, vanilla, SIZE_MAX / 8, 0, &bad_job, &err);
  CHECK(code == CUZK_CODE_INVALID_INPUT && err, "vanilla count SIZE_MAX/8: %d %s", code, err ? err : "");
  cuzk_string_free(err);
  err = NULL;
  code = cuzk_submit_window_post(engine, 10, NULL, 32, 1000, vanilla, 2, 0, &bad_job, &err);
  CHECK(code == CUZK_CODE_NULL_ARGUMENT && err, "null randomness with a length: %d", code);
  cuzk_string_free(err);
  err = NULL;
  code = cuzk_submit_window_post(engine, 10, randomness, rlen, 1000, vanilla, 2, 0, NULL, &err);
  CHECK(code == CUZK_CODE_NULL_ARGUMENT && err, "null job_out: %d", code);
  cuzk_string_free(err);
  err = NULL;
  code = cuzk_await(engine, 999999, 0, &proof, NULL, &err);
  CHECK(code == CUZK_CODE_UNKNOWN_JOB, "unknown job: %d", code);
  cuzk_string_free(err);
  err = NULL;
  code = cuzk_job_release(engine, job, &err);
  CHECK(code == CUZK_CODE_UNKNOWN_JOB && err, "release of an awaited job: %d", code);
  cuzk_string_free(err);

  char *json = NULL;
  code = cuzk_status_json(engine, &json, NULL);
  CHECK(code == CUZK_CODE_OK && json && strstr(json, "\"completed\":1"), "status: %s", json ? json : "");
  cuzk_string_free(json);
  CuzkStatus status;
  memset(&status, 0xFF, sizeof status);
  status.struct_size = sizeof status;
  code = cuzk_status(engine, &status, NULL);
  CHECK(code == CUZK_CODE_OK && status.jobs_completed == 1 && status.jobs_active == 0 &&
            strcmp(status.backend, "cpu") == 0 && !status.closed &&
            status.pool_free == status.pool_buffers && status.srs_resident == 1 &&
            status.jobs_held == 0,
        "status struct: completed %llu backend %.32s", (unsigned long long)status.jobs_completed,
        status.backend);
  CHECK(status.struct_size == sizeof status, "struct_size written back: %u", status.struct_size);
  /* Versioned structs: a size below the first layout is refused and nothing is written; a
   * caller built against a newer, larger header gets this library's size back and its added
   * fields left alone. */
  CuzkStatus unsized_status;
  memset(&unsized_status, 0, sizeof unsized_status);
  unsized_status.struct_size = 8;
  err = NULL;
  code = cuzk_status(engine, &unsized_status, &err);
  CHECK(code == CUZK_CODE_INVALID_INPUT && err && strstr(err, "struct_size") &&
            unsized_status.jobs_completed == 0,
        "status with struct_size 8: %d %s", code, err ? err : "");
  cuzk_string_free(err);
  struct {
    CuzkStatus status;
    uint64_t added_later;
  } newer;
  memset(&newer, 0xEE, sizeof newer);
  newer.status.struct_size = sizeof newer;
  code = cuzk_status(engine, &newer.status, NULL);
  CHECK(code == CUZK_CODE_OK && newer.status.struct_size == sizeof(CuzkStatus) &&
            newer.status.jobs_completed == 1 && newer.added_later == 0xEEEEEEEEEEEEEEEEull,
        "status into a newer caller's struct: %d size %u", code, newer.status.struct_size);

  code = cuzk_engine_close(engine, NULL);
  CHECK(code == CUZK_CODE_OK, "close: %d", code);
  code = cuzk_engine_close(NULL, NULL);
  CHECK(code == CUZK_CODE_OK, "close(NULL): %d", code);
  close_races_calls(randomness, rlen, vanilla);

  /* Planning: a plan as JSON; bad requests are caller errors. */
  json = NULL;
  code = cuzk_plan("{\"ram_bytes\":549755813888,\"gpu_bytes\":[80000000000],\"cores\":64,"
                   "\"mix\":[\"porep-32g\",\"winning-32g\"]}",
                   &json, NULL);
  CHECK(code == CUZK_CODE_OK && json && strstr(json, "\"fits\":true"), "plan: %d %s", code,
        json ? json : "");
  cuzk_string_free(json);
  json = NULL;
  err = NULL;
  code = cuzk_plan("{\"ram_bytes\":1,\"cores\":1,\"mix\":[\"porep-33g\"]}", &json, &err);
  CHECK(code == CUZK_CODE_INVALID_INPUT && json == NULL && err && strstr(err, "porep-33g"),
        "plan with an unknown circuit: %d", code);
  cuzk_string_free(err);

}

/* One-shot proving on the process-wide default engine, its verification, and the default
 * engine refusing to close. */
static void default_engine_checks(const char *dir, const unsigned char *randomness, size_t rlen,
                                  const CuzkSlice *vanilla) {
  char *err = NULL;
  CuzkCode code;
  CuzkBytes proof = {0};
  CuzkStatus status = {.struct_size = sizeof status};
  /* One-shot proving on the process-wide default engine (null engine), as filecoin-ffi's
   * GenerateWindowPoStWithVanilla: every partition, merged, then checked by the verifier. */
  err = NULL;
  code = cuzk_prove_window_post(NULL, 10, randomness, rlen, 1000, vanilla, 2, CUZK_ALL_PARTITIONS,
                                &proof, &err);
  CHECK(code == CUZK_CODE_OK && proof.len == 192, "one-shot window: %d %s", code, err ? err : "");
  cuzk_string_free(err);
  /* The verifier needs the sectors' numbers and comm_r: the two PoRep entries of the manifest. */
  size_t mlen;
  char *manifest = (char *)read_file(dir, "manifest.json", &mlen);
  manifest = realloc(manifest, mlen + 1);
  manifest[mlen] = 0;
  CuzkSectorInfo sectors[2];
  unsigned char comm_r[2][32];
  const char *cursor = manifest;
  for (int i = 0; i < 2; i++) {
    cursor = strstr(cursor, "\"sector\": ");
    CHECK(cursor != NULL, "manifest has sector %d", i);
    if (!cursor) break;
    sectors[i].registered_proof = 10;
    sectors[i].sector_number = strtoull(cursor + 10, NULL, 10);
    cursor = strstr(cursor, "\"comm_r\": \"");
    CHECK(cursor != NULL, "manifest has comm_r %d", i);
    if (!cursor) break;
    for (int b = 0; b < 32; b++) sscanf(cursor + 11 + 2 * b, "%2hhx", &comm_r[i][b]);
    sectors[i].comm_r = (CuzkSlice){comm_r[i], 32};
  }
  bool valid = false;
  CuzkPoStProof window_proof = {10, (CuzkSlice){proof.ptr, proof.len}};
  code = cuzk_verify_window_post((CuzkSlice){randomness, rlen}, 1000, sectors, 2, &window_proof, 1,
                                 &valid, &err);
  CHECK(code == CUZK_CODE_OK && valid, "one-shot window proof verifies: %d %s", code,
        err ? err : "");
  cuzk_string_free(err);
  cuzk_bytes_free(&proof);
  free(manifest);

  const CuzkEngine *shared = NULL;
  code = cuzk_default_engine(&shared, NULL);
  CHECK(code == CUZK_CODE_OK && shared, "default engine: %d", code);
  err = NULL;
  code = cuzk_engine_close(shared, &err); /* refused for the default engine */
  CHECK(code == CUZK_CODE_INVALID_INPUT && err, "closing the default engine: %d", code);
  cuzk_string_free(err);
  code = cuzk_status(shared, &status, NULL);
  CHECK(code == CUZK_CODE_OK && status.jobs_completed == 1 && !status.closed,
        "default engine served the one-shot job and survives close: %d", code);
  err = NULL;
  code = cuzk_prove_window_post(NULL, 0, randomness, rlen, 1000, vanilla, 2, CUZK_ALL_PARTITIONS,
                                &proof, &err);
  CHECK(code == CUZK_CODE_INVALID_INPUT && err && proof.len == 0, "one-shot with a winning type: %d",
        code);
  cuzk_string_free(err);
}

int main(int argc, char **argv) {
  const char *part = argc == 3 ? argv[2] : "all";
  int engine_part = !strcmp(part, "all") || !strcmp(part, "engine");
  int default_part = !strcmp(part, "all") || !strcmp(part, "default");
  if ((argc != 2 && argc != 3) || !(engine_part || default_part)) {
    fprintf(stderr, "usage: %s <testdata dir> [all|engine|default]\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  CHECK(cuzk_abi_version() == CUZK_ABI_VERSION, "abi version %u", cuzk_abi_version());
  cuzk_init_logging("warn");

  /* A 2 KiB WindowPoSt partition over the two test sectors. */
  size_t rlen, v0len, v1len;
  unsigned char *randomness = read_file(dir, "randomness.bin", &rlen);
  unsigned char *v0 = read_file(dir, "window-0.vanilla", &v0len);
  unsigned char *v1 = read_file(dir, "window-1.vanilla", &v1len);
  CuzkSlice vanilla[2] = {{v0, v0len}, {v1, v1len}};
  if (engine_part) engine_checks(randomness, rlen, vanilla);
  if (default_part) default_engine_checks(dir, randomness, rlen, vanilla);
  free(randomness);
  free(v0);
  free(v1);
  /* Every string, buffer and list the library handed out was given back. */
  CHECK(cuzk_live_outputs() == 0, "outputs not freed: %llu",
        (unsigned long long)cuzk_live_outputs());
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("c smoke test: ok\n");
  return 0;
}
