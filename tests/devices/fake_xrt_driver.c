/* A host-memory stand-in for libxrt_core; see fake_xrt_driver.h.
 *
 * The entry points have exactly the types xrt.h gives XRT's on Linux, spelt
 * without including it: xclDeviceHandle is void*, xclBufferHandle is
 * unsigned int (NULLBO is 0xffffffff), and the enumerations xclVerbosityLevel
 * and xclBOSyncDirection are declared here with their tags and the values the
 * fake needs. The same types, not merely the same ABI: clang's
 * -fsanitize=function checks every call through a function pointer against
 * the callee's type, by name, and the backend calls these through pointers
 * typed by xrt.h. xclGetDeviceInfo2 is present but always answers ENOSYS, so
 * its struct xclDeviceInfo2 stays incomplete here. */
#include "fake_xrt_driver.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned int FakeBuffer;

enum xclVerbosityLevel { kQuiet = 0 };
enum xclBOSyncDirection { kSyncToCard = 0, kSyncFromCard = 1 };
struct xclDeviceInfo2;

enum { kMaximumCards = 4, kMaximumBuffers = 1024 };
static const FakeBuffer kNoBuffer = 0xffffffffu;

struct Card {
  int open;
  size_t bytes_in_use;
};

struct BufferObject {
  int live;
  struct Card* card;
  size_t bytes;
  unsigned char* host_side;
  unsigned char* card_side;
};

static pthread_mutex_t state_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned int card_count;
static size_t memory_bytes_per_card;
static struct Card cards[kMaximumCards];
static struct BufferObject buffers[kMaximumBuffers];
static size_t refused_allocations;
static char failing_symbol[64];
static int failing_error_number;

/* Returns the injected errno value for `symbol_name` once, or 0. Requires
 * state_mutex held. */
static int TakeInjectedFailureLocked(const char* symbol_name) {
  if (strcmp(failing_symbol, symbol_name) != 0) return 0;
  failing_symbol[0] = '\0';
  return failing_error_number;
}

/* The live buffer object `buffer` of `card` whose [offset, offset + bytes)
 * is inside it, or NULL. Requires state_mutex held. */
static struct BufferObject* FindRangeLocked(void* card, FakeBuffer buffer, size_t offset,
                                            size_t bytes) {
  if (buffer >= kMaximumBuffers) return NULL;
  struct BufferObject* object = &buffers[buffer];
  if (!object->live || object->card != card) return NULL;
  if (offset > object->bytes || bytes > object->bytes - offset) return NULL;
  return object;
}

static unsigned int FakeProbe(void) {
  pthread_mutex_lock(&state_mutex);
  const unsigned int count = card_count;
  pthread_mutex_unlock(&state_mutex);
  return count;
}

static void* FakeOpen(unsigned int index, const char* log_file, enum xclVerbosityLevel verbosity) {
  (void)log_file;
  (void)verbosity;
  void* card = NULL;
  pthread_mutex_lock(&state_mutex);
  if (index < card_count && TakeInjectedFailureLocked("xclOpen") == 0) {
    cards[index].open += 1;
    card = &cards[index];
  }
  pthread_mutex_unlock(&state_mutex);
  return card;
}

static void FakeClose(void* card) {
  pthread_mutex_lock(&state_mutex);
  if (card != NULL) ((struct Card*)card)->open -= 1;
  pthread_mutex_unlock(&state_mutex);
}

static int FakeGetDeviceInfo(void* card, struct xclDeviceInfo2* information) {
  (void)card;
  (void)information;
  return -ENOSYS;
}

static FakeBuffer FakeAllocate(void* card, size_t bytes, int unused, unsigned int flags) {
  (void)unused;
  FakeBuffer result = kNoBuffer;
  pthread_mutex_lock(&state_mutex);
  struct Card* owner = card;
  const int injected = TakeInjectedFailureLocked("xclAllocBO");
  if (injected != 0) {
    errno = injected;
  } else if (owner == NULL || owner->open == 0 || flags != 0 || bytes == 0) {
    errno = EINVAL;
  } else if (bytes > memory_bytes_per_card - owner->bytes_in_use) {
    ++refused_allocations;
    errno = ENOMEM;
  } else {
    for (FakeBuffer index = 0; index < kMaximumBuffers; ++index) {
      struct BufferObject* object = &buffers[index];
      if (object->live) continue;
      object->host_side = calloc(bytes, 1);
      object->card_side = calloc(bytes, 1);
      object->live = 1;
      object->card = owner;
      object->bytes = bytes;
      owner->bytes_in_use += bytes;
      result = index;
      break;
    }
    if (result == kNoBuffer) errno = ENOMEM;
  }
  pthread_mutex_unlock(&state_mutex);
  return result;
}

static void FreeObjectLocked(struct BufferObject* object) {
  free(object->host_side);
  free(object->card_side);
  object->card->bytes_in_use -= object->bytes;
  memset(object, 0, sizeof(*object));
}

static void FakeFree(void* card, FakeBuffer buffer) {
  pthread_mutex_lock(&state_mutex);
  struct BufferObject* object = FindRangeLocked(card, buffer, 0, 0);
  if (object != NULL) FreeObjectLocked(object);
  pthread_mutex_unlock(&state_mutex);
}

static size_t FakeWrite(void* card, FakeBuffer buffer, const void* source, size_t bytes,
                        size_t seek) {
  pthread_mutex_lock(&state_mutex);
  int error_number = TakeInjectedFailureLocked("xclWriteBO");
  struct BufferObject* object = FindRangeLocked(card, buffer, seek, bytes);
  if (error_number == 0 && object == NULL) error_number = EINVAL;
  if (error_number == 0) memcpy(object->host_side + seek, source, bytes);
  pthread_mutex_unlock(&state_mutex);
  return (size_t)(-(long)error_number);
}

static size_t FakeRead(void* card, FakeBuffer buffer, void* destination, size_t bytes,
                       size_t skip) {
  pthread_mutex_lock(&state_mutex);
  int error_number = TakeInjectedFailureLocked("xclReadBO");
  struct BufferObject* object = FindRangeLocked(card, buffer, skip, bytes);
  if (error_number == 0 && object == NULL) error_number = EINVAL;
  if (error_number == 0) memcpy(destination, object->host_side + skip, bytes);
  pthread_mutex_unlock(&state_mutex);
  return (size_t)(-(long)error_number);
}

static int FakeSync(void* card, FakeBuffer buffer, enum xclBOSyncDirection direction, size_t bytes,
                    size_t offset) {
  pthread_mutex_lock(&state_mutex);
  int error_number = TakeInjectedFailureLocked("xclSyncBO");
  struct BufferObject* object = FindRangeLocked(card, buffer, offset, bytes);
  if (error_number == 0 && object == NULL) error_number = EINVAL;
  if (error_number == 0) {
    if (direction == kSyncToCard) {
      memcpy(object->card_side + offset, object->host_side + offset, bytes);
    } else if (direction == kSyncFromCard) {
      memcpy(object->host_side + offset, object->card_side + offset, bytes);
    } else {
      error_number = EINVAL;
    }
  }
  pthread_mutex_unlock(&state_mutex);
  return -error_number;
}

struct EntryPoint {
  const char* name;
  void* address;
};

/* Function pointers travel as void*, as they do through dlsym (POSIX). */
static const struct EntryPoint kEntryPoints[] = {
    {"xclProbe", (void*)FakeProbe},      {"xclOpen", (void*)FakeOpen},
    {"xclClose", (void*)FakeClose},      {"xclGetDeviceInfo2", (void*)FakeGetDeviceInfo},
    {"xclAllocBO", (void*)FakeAllocate}, {"xclFreeBO", (void*)FakeFree},
    {"xclWriteBO", (void*)FakeWrite},    {"xclReadBO", (void*)FakeRead},
    {"xclSyncBO", (void*)FakeSync},
};

void* fake_xrt_symbol(const char* symbol_name) {
  for (size_t i = 0; i < sizeof(kEntryPoints) / sizeof(kEntryPoints[0]); ++i) {
    if (strcmp(kEntryPoints[i].name, symbol_name) == 0) return kEntryPoints[i].address;
  }
  return NULL;
}

void fake_xrt_reset(unsigned int new_card_count, size_t memory_bytes) {
  pthread_mutex_lock(&state_mutex);
  for (size_t i = 0; i < kMaximumBuffers; ++i) {
    if (buffers[i].live) FreeObjectLocked(&buffers[i]);
  }
  memset(cards, 0, sizeof(cards));
  card_count = new_card_count < kMaximumCards ? new_card_count : kMaximumCards;
  memory_bytes_per_card = memory_bytes;
  refused_allocations = 0;
  failing_symbol[0] = '\0';
  pthread_mutex_unlock(&state_mutex);
}

void fake_xrt_fail_next_call(const char* symbol_name, int error_number) {
  pthread_mutex_lock(&state_mutex);
  strncpy(failing_symbol, symbol_name, sizeof(failing_symbol) - 1);
  failing_symbol[sizeof(failing_symbol) - 1] = '\0';
  failing_error_number = error_number;
  pthread_mutex_unlock(&state_mutex);
}

size_t fake_xrt_live_buffers(void) {
  size_t count = 0;
  pthread_mutex_lock(&state_mutex);
  for (size_t i = 0; i < kMaximumBuffers; ++i) count += buffers[i].live ? 1 : 0;
  pthread_mutex_unlock(&state_mutex);
  return count;
}

size_t fake_xrt_refused_allocations(void) {
  pthread_mutex_lock(&state_mutex);
  const size_t count = refused_allocations;
  pthread_mutex_unlock(&state_mutex);
  return count;
}

int fake_xrt_open_cards(void) {
  int open = 0;
  pthread_mutex_lock(&state_mutex);
  for (size_t i = 0; i < kMaximumCards; ++i) open += cards[i].open;
  pthread_mutex_unlock(&state_mutex);
  return open;
}
