// libbwa_hooks.hpp - what bwa-mmap observes inside libbwa (see src/libbwa_hooks.cpp).
#pragma once

#include <bwa/bwt.h>

namespace bwammap {

// How many FASTA/FASTQ records libbwa's reader rejected as truncated (kseq_read() == -2)
// since the process started. bwa's own driver ignores these; bwa-mmap mem fails on them.
int truncated_records_seen();

}  // namespace bwammap
