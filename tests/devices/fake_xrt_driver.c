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
 * its struct xclDeviceInfo2 stays incomplete here; struct axlf stays
 * incomplete too, its bytes read at the offsets xrt/xclbin.h gives, and
 * struct xclBOProperties is declared with xrt.h's layout.
 *
 * Buffer object n reports the physical address (n + 1) << 32, so that an
 * address in a start command names its object in the high word and the byte
 * offset in the low one. */
#include "fake_xrt_driver.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned int FakeBuffer;

enum xclVerbosityLevel { kQuiet = 0 };
enum xclBOSyncDirection { kSyncToCard = 0, kSyncFromCard = 1 };
struct xclDeviceInfo2;
struct axlf;
struct xclBOProperties {
  uint32_t handle;
  uint32_t flags;
  uint64_t size;
  uint64_t paddr;
  int reserved;
};

enum { kMaximumCards = 4, kMaximumBuffers = 1024, kMaximumComputeUnits = 128, kNameBytes = 64 };
static const FakeBuffer kNoBuffer = 0xffffffffu;
/* XCL_BO_FLAGS_EXECBUF (xrt/xrt_mem.h). */
static const unsigned int kExecBufferFlag = 1u << 31;

/* Where struct axlf (xrt/xclbin.h) keeps what the fake reads. */
enum {
  kUuidOffset = 416,           /* m_header.uuid, 16 bytes */
  kSectionCountOffset = 448,   /* m_header.m_numSections */
  kSectionHeadersOffset = 456, /* m_sections, 40 bytes each: */
  kSectionHeaderBytes = 40,
  kSectionKindField = 0,    /* m_sectionKind */
  kSectionOffsetField = 24, /* m_sectionOffset */
  kIpLayoutKind = 8,        /* IP_LAYOUT: int32 m_count, 4 bytes padding, */
  kIpDataOffset = 8,        /* then ip_data of 80 bytes each: */
  kIpDataBytes = 80,
  kIpTypeField = 0,  /* m_type */
  kIpNameField = 16, /* m_name, 64 bytes */
  kIpKernelType = 1  /* IP_KERNEL */
};

/* The ert_start_kernel_cmd header (xrt/ert.h): state in bits 0-3,
 * extra_cu_masks in 10-11, count in 12-22, opcode in 23-27, type in 28-31. */
enum {
  kStateNew = 1,          /* ERT_CMD_STATE_NEW */
  kStateRunning = 3,      /* ERT_CMD_STATE_RUNNING */
  kStateCompleted = 4,    /* ERT_CMD_STATE_COMPLETED */
  kStateError = 5,        /* ERT_CMD_STATE_ERROR */
  kStartComputeUnit = 0,  /* ERT_START_CU */
  kComputeUnitCommand = 3 /* ERT_CU */
};

/* The register map of the test kernel vadd (tests/devices/data/vadd.xclbin):
 * out[i] = in1[i] + in2[i] over int32 for i < size. */
enum { kVaddIn1 = 0x10, kVaddIn2 = 0x1c, kVaddOut = 0x28, kVaddSize = 0x34 };

struct Card {
  int open;
  size_t bytes_in_use;
  /* The loaded xclbin: its uuid and, per IP_LAYOUT entry, the kernel name
   * before the colon ("" for an entry that is no kernel). */
  int xclbin_loaded;
  unsigned char xclbin_uuid[16];
  unsigned int compute_unit_count;
  char kernel_names[kMaximumComputeUnits][kNameBytes];
  int open_contexts[kMaximumComputeUnits];
};

struct BufferObject {
  int live;
  struct Card* card;
  size_t bytes;
  unsigned char* host_side;
  unsigned char* card_side;
  int exec_buffer;
  /* A start command taken by xclExecBuf that runs at the next xclExecWait,
   * so that the device's wait is exercised as on a card. */
  int submitted;
};

static pthread_mutex_t state_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned int card_count;
static size_t memory_bytes_per_card;
static struct Card cards[kMaximumCards];
static struct BufferObject buffers[kMaximumBuffers];
static size_t refused_allocations;
static char failing_symbol[64];
static int failing_error_number;
static size_t executed_commands;
static unsigned int forced_end_state;

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
  } else if (owner == NULL || owner->open == 0 || (flags != 0 && flags != kExecBufferFlag) ||
             bytes == 0) {
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
      object->exec_buffer = flags == kExecBufferFlag;
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

static uint32_t ReadWord(const unsigned char* bytes) {
  uint32_t value;
  memcpy(&value, bytes, sizeof(value));
  return value;
}

static uint64_t ReadDoubleWord(const unsigned char* bytes) {
  uint64_t value;
  memcpy(&value, bytes, sizeof(value));
  return value;
}

/* Remembers the uuid and IP_LAYOUT kernels of `image`, whose layout the
 * device has already checked. Returns an errno value. Requires state_mutex
 * held. */
static int LoadImageLocked(struct Card* card, const unsigned char* image) {
  if (memcmp(image, "xclbin2", 8) != 0) return EINVAL;
  const uint32_t section_count = ReadWord(image + kSectionCountOffset);
  card->compute_unit_count = 0;
  memset(card->kernel_names, 0, sizeof(card->kernel_names));
  for (uint32_t section = 0; section < section_count; ++section) {
    const unsigned char* header = image + kSectionHeadersOffset + section * kSectionHeaderBytes;
    if (ReadWord(header + kSectionKindField) != kIpLayoutKind) continue;
    const unsigned char* layout = image + ReadDoubleWord(header + kSectionOffsetField);
    const uint32_t count = ReadWord(layout);
    if (count > kMaximumComputeUnits) return EINVAL;
    for (uint32_t unit = 0; unit < count; ++unit) {
      const unsigned char* entry = layout + kIpDataOffset + unit * kIpDataBytes;
      if (ReadWord(entry + kIpTypeField) != kIpKernelType) continue;
      const char* name = (const char*)entry + kIpNameField;
      const size_t length = strcspn(name, ":");
      if (length >= kNameBytes) return EINVAL;
      memcpy(card->kernel_names[unit], name, length);
    }
    card->compute_unit_count = count;
  }
  memcpy(card->xclbin_uuid, image + kUuidOffset, sizeof(card->xclbin_uuid));
  card->xclbin_loaded = 1;
  return 0;
}

static int FakeLoadXclbin(void* card, const struct axlf* image) {
  pthread_mutex_lock(&state_mutex);
  struct Card* owner = card;
  int error_number = TakeInjectedFailureLocked("xclLoadXclBin");
  for (unsigned int unit = 0; error_number == 0 && unit < kMaximumComputeUnits; ++unit) {
    /* As xocl does: no new image while contexts hold the old one. */
    if (owner->open_contexts[unit] != 0) error_number = EBUSY;
  }
  if (error_number == 0) error_number = LoadImageLocked(owner, (const unsigned char*)image);
  pthread_mutex_unlock(&state_mutex);
  return -error_number;
}

/* Whether `uuid` names the loaded image and `unit` one of its kernels.
 * Requires state_mutex held. */
static int IsLoadedKernelLocked(const struct Card* card, const unsigned char* uuid,
                                unsigned int unit) {
  return card->xclbin_loaded && memcmp(card->xclbin_uuid, uuid, sizeof(card->xclbin_uuid)) == 0 &&
         unit < card->compute_unit_count && card->kernel_names[unit][0] != '\0';
}

static int FakeOpenContext(void* card, const unsigned char* xclbin_uuid, unsigned int unit,
                           bool shared) {
  pthread_mutex_lock(&state_mutex);
  struct Card* owner = card;
  int error_number = TakeInjectedFailureLocked("xclOpenContext");
  if (error_number == 0 && !IsLoadedKernelLocked(owner, xclbin_uuid, unit)) error_number = EINVAL;
  if (error_number == 0 && !shared && owner->open_contexts[unit] != 0) error_number = EBUSY;
  if (error_number == 0) owner->open_contexts[unit] += 1;
  pthread_mutex_unlock(&state_mutex);
  return -error_number;
}

static int FakeCloseContext(void* card, const unsigned char* xclbin_uuid, unsigned int unit) {
  pthread_mutex_lock(&state_mutex);
  struct Card* owner = card;
  int error_number = 0;
  if (!IsLoadedKernelLocked(owner, xclbin_uuid, unit) || owner->open_contexts[unit] == 0) {
    error_number = EINVAL;
  } else {
    owner->open_contexts[unit] -= 1;
  }
  pthread_mutex_unlock(&state_mutex);
  return -error_number;
}

static int FakeGetProperties(void* card, FakeBuffer buffer, struct xclBOProperties* properties) {
  pthread_mutex_lock(&state_mutex);
  int error_number = TakeInjectedFailureLocked("xclGetBOProperties");
  const struct BufferObject* object = FindRangeLocked(card, buffer, 0, 0);
  if (error_number == 0 && object == NULL) error_number = EINVAL;
  if (error_number == 0) {
    memset(properties, 0, sizeof(*properties));
    properties->handle = buffer;
    properties->flags = object->exec_buffer ? kExecBufferFlag : 0;
    properties->size = object->bytes;
    properties->paddr = ((uint64_t)buffer + 1) << 32;
  }
  pthread_mutex_unlock(&state_mutex);
  return -error_number;
}

/* The host side is what a mapping shows, as on a card. */
static void* FakeMap(void* card, FakeBuffer buffer, bool write) {
  (void)write;
  pthread_mutex_lock(&state_mutex);
  struct BufferObject* object = FindRangeLocked(card, buffer, 0, 0);
  void* address = object != NULL ? object->host_side : NULL;
  pthread_mutex_unlock(&state_mutex);
  return address;
}

static int FakeUnmap(void* card, FakeBuffer buffer, void* address) {
  pthread_mutex_lock(&state_mutex);
  const struct BufferObject* object = FindRangeLocked(card, buffer, 0, 0);
  const int error_number = object != NULL && object->host_side == address ? 0 : EINVAL;
  pthread_mutex_unlock(&state_mutex);
  return -error_number;
}

/* The card side of the `bytes` bytes at physical address `address`, or
 * NULL. Requires state_mutex held. */
static unsigned char* CardBytesLocked(struct Card* card, uint64_t address, size_t bytes) {
  const uint64_t object_number = address >> 32;
  if (object_number == 0 || object_number > kMaximumBuffers) return NULL;
  const size_t offset = (size_t)(address & 0xffffffffu);
  struct BufferObject* object =
      FindRangeLocked(card, (FakeBuffer)(object_number - 1), offset, bytes);
  return object != NULL ? object->card_side + offset : NULL;
}

/* Runs kernel `name` with `registers`, its register map of `register_bytes`
 * bytes, and returns the command's end state. Requires state_mutex held. */
static unsigned int RunKernelLocked(struct Card* card, const char* name,
                                    const unsigned char* registers, size_t register_bytes) {
  if (strcmp(name, "vadd") != 0 || register_bytes < kVaddSize + 4) return kStateError;
  const size_t bytes = (size_t)ReadWord(registers + kVaddSize) * sizeof(int32_t);
  const unsigned char* in1 = CardBytesLocked(card, ReadDoubleWord(registers + kVaddIn1), bytes);
  const unsigned char* in2 = CardBytesLocked(card, ReadDoubleWord(registers + kVaddIn2), bytes);
  unsigned char* out = CardBytesLocked(card, ReadDoubleWord(registers + kVaddOut), bytes);
  if (in1 == NULL || in2 == NULL || out == NULL) return kStateError;
  for (size_t offset = 0; offset < bytes; offset += sizeof(int32_t)) {
    /* Unsigned, so that overflow wraps as int32 does on the card. */
    uint32_t left, right;
    memcpy(&left, in1 + offset, sizeof(left));
    memcpy(&right, in2 + offset, sizeof(right));
    const uint32_t sum = left + right;
    memcpy(out + offset, &sum, sizeof(sum));
  }
  return kStateCompleted;
}

/* Checks a start command and marks it running; xclExecWait runs it. */
static int FakeExecute(void* card, FakeBuffer buffer) {
  pthread_mutex_lock(&state_mutex);
  struct Card* owner = card;
  int error_number = TakeInjectedFailureLocked("xclExecBuf");
  struct BufferObject* object = FindRangeLocked(card, buffer, 0, sizeof(uint32_t));
  if (error_number == 0 && (object == NULL || !object->exec_buffer)) error_number = EINVAL;
  if (error_number == 0) {
    const uint32_t header = ReadWord(object->host_side);
    const uint32_t mask_words = 1 + ((header >> 10) & 0x3);
    const uint32_t count = (header >> 12) & 0x7ff;
    const int well_formed = (header & 0xf) == kStateNew &&
                            ((header >> 23) & 0x1f) == kStartComputeUnit &&
                            (header >> 28) == kComputeUnitCommand && count >= mask_words + 4 &&
                            (1 + (size_t)count) * sizeof(uint32_t) <= object->bytes;
    /* Exactly one compute unit, holding a context. */
    unsigned int unit = kMaximumComputeUnits;
    int units = 0;
    for (uint32_t word = 0; well_formed && word < mask_words; ++word) {
      const uint32_t mask = ReadWord(object->host_side + (1 + word) * sizeof(uint32_t));
      for (unsigned int bit = 0; bit < 32; ++bit) {
        if ((mask >> bit) & 1) {
          unit = word * 32 + bit;
          ++units;
        }
      }
    }
    if (!well_formed || units != 1 || unit >= owner->compute_unit_count ||
        owner->open_contexts[unit] == 0) {
      error_number = EINVAL;
    } else {
      const uint32_t running = (header & ~0xfu) | kStateRunning;
      memcpy(object->host_side, &running, sizeof(running));
      object->submitted = 1;
    }
  }
  pthread_mutex_unlock(&state_mutex);
  return -error_number;
}

/* Runs every command submitted on the card; returns how many, as poll(2)
 * returns the number of ready descriptors. */
static int FakeWait(void* card, int timeout_milliseconds) {
  (void)timeout_milliseconds;
  pthread_mutex_lock(&state_mutex);
  struct Card* owner = card;
  int error_number = TakeInjectedFailureLocked("xclExecWait");
  int completed = 0;
  for (size_t index = 0; error_number == 0 && index < kMaximumBuffers; ++index) {
    struct BufferObject* object = &buffers[index];
    if (!object->live || object->card != owner || !object->submitted) continue;
    const uint32_t header = ReadWord(object->host_side);
    const uint32_t mask_words = 1 + ((header >> 10) & 0x3);
    const uint32_t count = (header >> 12) & 0x7ff;
    unsigned int unit = 0;
    for (uint32_t word = 0; word < mask_words; ++word) {
      const uint32_t mask = ReadWord(object->host_side + (1 + word) * sizeof(uint32_t));
      for (unsigned int bit = 0; bit < 32; ++bit) {
        if ((mask >> bit) & 1) unit = word * 32 + bit;
      }
    }
    unsigned int state = forced_end_state;
    forced_end_state = 0;
    if (state == 0) {
      state = RunKernelLocked(owner, owner->kernel_names[unit],
                              object->host_side + (1 + mask_words) * sizeof(uint32_t),
                              (count - mask_words) * sizeof(uint32_t));
    }
    const uint32_t ended = (header & ~0xfu) | state;
    memcpy(object->host_side, &ended, sizeof(ended));
    object->submitted = 0;
    ++executed_commands;
    ++completed;
  }
  pthread_mutex_unlock(&state_mutex);
  return error_number != 0 ? -error_number : completed;
}

struct EntryPoint {
  const char* name;
  void* address;
};

/* Function pointers travel as void*, as they do through dlsym (POSIX). */
static const struct EntryPoint kEntryPoints[] = {
    {"xclProbe", (void*)FakeProbe},
    {"xclOpen", (void*)FakeOpen},
    {"xclClose", (void*)FakeClose},
    {"xclGetDeviceInfo2", (void*)FakeGetDeviceInfo},
    {"xclAllocBO", (void*)FakeAllocate},
    {"xclFreeBO", (void*)FakeFree},
    {"xclWriteBO", (void*)FakeWrite},
    {"xclReadBO", (void*)FakeRead},
    {"xclSyncBO", (void*)FakeSync},
    {"xclGetBOProperties", (void*)FakeGetProperties},
    {"xclMapBO", (void*)FakeMap},
    {"xclUnmapBO", (void*)FakeUnmap},
    {"xclLoadXclBin", (void*)FakeLoadXclbin},
    {"xclOpenContext", (void*)FakeOpenContext},
    {"xclCloseContext", (void*)FakeCloseContext},
    {"xclExecBuf", (void*)FakeExecute},
    {"xclExecWait", (void*)FakeWait},
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
  executed_commands = 0;
  forced_end_state = 0;
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

int fake_xrt_open_contexts(void) {
  int open = 0;
  pthread_mutex_lock(&state_mutex);
  for (size_t card = 0; card < kMaximumCards; ++card) {
    for (size_t unit = 0; unit < kMaximumComputeUnits; ++unit)
      open += cards[card].open_contexts[unit];
  }
  pthread_mutex_unlock(&state_mutex);
  return open;
}

size_t fake_xrt_executed_commands(void) {
  pthread_mutex_lock(&state_mutex);
  const size_t count = executed_commands;
  pthread_mutex_unlock(&state_mutex);
  return count;
}

void fake_xrt_end_next_command_in(unsigned int state) {
  pthread_mutex_lock(&state_mutex);
  forced_end_state = state;
  pthread_mutex_unlock(&state_mutex);
}
