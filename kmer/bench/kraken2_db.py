"""Builds a Kraken 2 DB offline from a genome list (path<TAB>taxid) and an NCBI taxonomy
directory, for kraken2-accuracy and kmer-bench. Reused when it was built from the same list."""
import os
import shutil
import subprocess
import time


def build(genome_list, tax_dir, db_dir, threads=2):
    """Returns the seconds spent building (0.0 if the cached DB was reused)."""
    stamp = os.path.join(db_dir, "built-from")
    wanted = open(genome_list).read()
    if os.path.exists(stamp) and open(stamp).read() == wanted:
        return 0.0
    start = time.time()
    shutil.rmtree(db_dir, ignore_errors=True)
    os.makedirs(os.path.join(db_dir, "taxonomy"))
    for f in ("nodes.dmp", "names.dmp"):
        shutil.copy(os.path.join(tax_dir, f), os.path.join(db_dir, "taxonomy", f))
    # Kraken 2 takes a sequence's taxid from a "kraken:taxid|N" tag in its header.
    lib = db_dir.rstrip("/") + ".library.fa"
    with open(lib, "w") as out:
        for line in wanted.splitlines():
            path, taxid = line.split("\t")
            n = 0
            with open(path) as g:
                for l in g:
                    if l.startswith(">"):
                        n += 1
                        l = f">{os.path.basename(path)}_{n}|kraken:taxid|{taxid}\n"
                    out.write(l)
    try:
        subprocess.run(["kraken2-build", "--add-to-library", lib, "--db", db_dir, "--no-masking"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["kraken2-build", "--build", "--db", db_dir, "--threads", str(threads)], check=True,
                       stdout=subprocess.DEVNULL)
    finally:
        os.unlink(lib)
    with open(stamp, "w") as f:
        f.write(wanted)
    return time.time() - start
