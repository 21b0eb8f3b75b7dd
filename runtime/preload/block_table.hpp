// block_table.hpp - the big allocations the preload handed out, by address.
//
// free(), realloc() and malloc_usable_size() must recognise our blocks and know their size.
// An open-addressing hash table (linear probing, backward-shift deletion) whose storage
// comes from mmap, never from malloc: it is used inside malloc itself. One mutex; big
// allocations are rare, so contention is not a concern.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace dimmap::preload {

enum class BlockKind : uint8_t {
  anonymous,         // private anonymous mapping (memory placement without a directory)
  file,              // MAP_SHARED mapping of an unlinked file (mmap, or memory on tmpfs)
  dimmap,            // dimmap_instance_mmap of an unlinked file
  inherited_dimmap,  // a dimmap block of the parent: only a PROT_NONE placeholder in this forked child
};

struct Block {
  uintptr_t user = 0;  // what malloc returned (key; never 0)
  uintptr_t base = 0;  // start of the mapping
  size_t map_len = 0;  // length of the mapping
  size_t usable = 0;   // bytes from user to the end of the mapping
  BlockKind kind = BlockKind::anonymous;
};

class BlockTable {
 public:
  BlockTable() = default;
  BlockTable(const BlockTable&) = delete;
  BlockTable& operator=(const BlockTable&) = delete;
  // No destructor on purpose: the preload's table must outlive every thread's last free()
  // at exit, so it is never torn down (its storage goes with the process).
  void release_storage();

  // False if the table cannot grow (mmap failed); the block is not recorded then.
  bool insert(const Block& b);
  bool find(uintptr_t user, Block* out);
  bool remove(uintptr_t user, Block* out);
  size_t size();

  // fork(): the child must not inherit the lock held by some other thread. Also used to
  // hold the lock around for_each_locked.
  void lock_for_fork() { mu_.lock(); }
  void unlock_after_fork() { mu_.unlock(); }
  // Calls fn on every block; fn may change anything but the key. Caller holds the lock
  // (lock_for_fork), e.g. in a forked child or at exit.
  void for_each_locked(void (*fn)(Block&));

 private:
  size_t slot_of(uintptr_t key) const;
  bool grow_locked();
  void insert_locked(const Block& b);
  bool remove_locked(uintptr_t user, Block* out);

  std::mutex mu_;
  Block* slots_ = nullptr;
  size_t capacity_ = 0;  // a power of two, or 0 before the first insert
  size_t count_ = 0;
};

}  // namespace dimmap::preload
