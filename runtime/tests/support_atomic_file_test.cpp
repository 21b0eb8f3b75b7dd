// support_atomic_file_test.cpp - outputs appear whole under their final name or not at all.
#include <dimmap/placement.hpp>
#include <dimmap/support/atomic_file.hpp>
#include <dimmap/testing/temp_dir.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using dimmap::support::AtomicFile;
using dimmap::support::Durability;
using dimmap::support::PendingRename;
using dimmap::testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AtomicFile, TemporaryIsBesideTheFinalFile) {
  EXPECT_EQ(dimmap::support::temporary_path("/a/b/out.bin"), "/a/b/out.bin.tmp." + std::to_string(::getpid()));
  EXPECT_EQ(dimmap::support::temporary_path("x", "partial"), "x.partial." + std::to_string(::getpid()));
}

TEST(AtomicFile, CommitRenamesAndLeavesNoTemporary) {
  TempDir dir("atomic-file");
  const std::string path = dir.file("out.txt");
  {
    AtomicFile out(path, 4);  // a tiny buffer: several flushes before commit
    out.write_text("hello, ");
    out.write_text("world\n");
    EXPECT_FALSE(std::filesystem::exists(path)) << "visible before commit";
    EXPECT_TRUE(std::filesystem::exists(out.temp_path()));
    EXPECT_EQ(std::filesystem::path(out.temp_path()).parent_path(), std::filesystem::path(path).parent_path());
    EXPECT_EQ(out.bytes_written(), 13u);
    out.commit();
  }
  EXPECT_EQ(slurp(path), "hello, world\n");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, DestructionWithoutCommitLeavesNothing) {
  TempDir dir("atomic-file");
  const std::string path = dir.file("out.txt");
  {
    AtomicFile out(path, 4);
    out.write_text("half of it");
    out.flush();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(dir.entries().empty());
}

TEST(AtomicFile, AbortKeepsTheOldFile) {
  TempDir dir("atomic-file");
  const std::string path = dir.write("out.txt", "old\n");
  try {
    AtomicFile out(path);
    out.write_text("new, but the run fails\n");
    throw std::runtime_error("the run failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(slurp(path), "old\n");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, MissingDirectoryIsNamedInTheError) {
  TempDir dir("atomic-file");
  const std::string path = dir.file("no-such-dir/out.txt");
  try {
    AtomicFile out(path);
    FAIL() << "created a file in a missing directory";
  } catch (const dimmap::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
  }
}

TEST(AtomicFile, WriteFileAtomicallyReplacesTheOldContent) {
  TempDir dir("atomic-file");
  const std::string path = dir.write("report.json", "{\"old\": true}");
  dimmap::support::write_file_atomically(path, "{\"new\": true}\n");
  EXPECT_EQ(slurp(path), "{\"new\": true}\n");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"report.json"});
}

TEST(PendingRename, CommitMovesWhatAnotherWriterWrote) {
  TempDir dir("pending-rename");
  const std::string path = dir.file("data.h5");
  PendingRename pending(path);
  std::ofstream(pending.temp_path()) << "written by name";
  pending.commit(Durability::sync);
  EXPECT_FALSE(pending.pending());
  EXPECT_EQ(slurp(path), "written by name");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"data.h5"});
}

TEST(PendingRename, DestructionRemovesTheTemporary) {
  TempDir dir("pending-rename");
  {
    PendingRename pending(dir.file("data.h5"));
    std::ofstream(pending.temp_path()) << "partial";
    PendingRename moved = std::move(pending);  // ownership of the cleanup moves along
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(PendingRename, FailedRenameRemovesTheTemporaryAndNamesBothPaths) {
  TempDir dir("pending-rename");
  const std::string target = dir.file("missing/out.txt");
  PendingRename pending(target, dir.file("out.tmp"));
  std::ofstream(pending.temp_path()) << "x";
  try {
    pending.commit();
    FAIL() << "renamed into a missing directory";
  } catch (const dimmap::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(target), std::string::npos) << what;
    EXPECT_NE(what.find(dir.file("out.tmp")), std::string::npos) << what;
  }
  EXPECT_TRUE(dir.entries().empty());
}

}  // namespace
