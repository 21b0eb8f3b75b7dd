// block_table.cpp - open addressing over mmap'd storage (see block_table.hpp).
#include "block_table.hpp"

#include <sys/mman.h>

namespace dimmap::preload {
namespace {

constexpr size_t kInitialCapacity = 1024;

Block* map_slots(size_t n) {
  void* p = mmap(nullptr, n * sizeof(Block), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<Block*>(p);  // zero-filled: every slot empty
}

}  // namespace

void BlockTable::release_storage() {
  std::lock_guard<std::mutex> lock(mu_);
  if (slots_) munmap(slots_, capacity_ * sizeof(Block));
  slots_ = nullptr;
  capacity_ = count_ = 0;
}

size_t BlockTable::slot_of(uintptr_t key) const {
  // Keys are mostly page aligned: drop those zero bits, multiply, fold the high bits down.
  const uint64_t h = (static_cast<uint64_t>(key) >> 12) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h ^ (h >> 32)) & (capacity_ - 1);
}

bool BlockTable::grow_locked() {
  const size_t cap = capacity_ ? capacity_ * 2 : kInitialCapacity;
  Block* fresh = map_slots(cap);
  if (!fresh) return false;
  Block* old = slots_;
  const size_t old_cap = capacity_;
  slots_ = fresh;
  capacity_ = cap;
  count_ = 0;
  for (size_t i = 0; i < old_cap; ++i)
    if (old[i].user) insert_locked(old[i]);
  if (old) munmap(old, old_cap * sizeof(Block));
  return true;
}

void BlockTable::insert_locked(const Block& b) {
  size_t i = slot_of(b.user);
  while (slots_[i].user && slots_[i].user != b.user) i = (i + 1) & (capacity_ - 1);
  if (!slots_[i].user) count_++;
  slots_[i] = b;
}

bool BlockTable::insert(const Block& b) {
  std::lock_guard<std::mutex> lock(mu_);
  if ((count_ + 1) * 2 > capacity_ && !grow_locked()) return false;  // keep load <= 1/2
  insert_locked(b);
  return true;
}

bool BlockTable::find(uintptr_t user, Block* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!capacity_) return false;
  for (size_t i = slot_of(user); slots_[i].user; i = (i + 1) & (capacity_ - 1)) {
    if (slots_[i].user == user) {
      *out = slots_[i];
      return true;
    }
  }
  return false;
}

bool BlockTable::remove_locked(uintptr_t user, Block* out) {
  if (!capacity_) return false;
  size_t i = slot_of(user);
  while (slots_[i].user != user) {
    if (!slots_[i].user) return false;
    i = (i + 1) & (capacity_ - 1);
  }
  if (out) *out = slots_[i];
  // Backward-shift deletion: pull later entries of the probe run into the hole, so lookups
  // never need tombstones.
  const size_t mask = capacity_ - 1;
  size_t hole = i;
  for (size_t j = (i + 1) & mask; slots_[j].user; j = (j + 1) & mask) {
    const size_t home = slot_of(slots_[j].user);
    // Move j into the hole unless its home lies cyclically in (hole, j].
    const bool home_after_hole = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!home_after_hole) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = Block();
  count_--;
  return true;
}

bool BlockTable::remove(uintptr_t user, Block* out) {
  std::lock_guard<std::mutex> lock(mu_);
  return remove_locked(user, out);
}

size_t BlockTable::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return count_;
}

void BlockTable::for_each_locked(void (*fn)(Block&)) {
  for (size_t i = 0; i < capacity_; ++i)
    if (slots_[i].user) fn(slots_[i]);
}

}  // namespace dimmap::preload
