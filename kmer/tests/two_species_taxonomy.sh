# two_species_taxonomy.sh - sourced by the kmer script tests: two_species_taxonomy DIR writes
# a four-node NCBI taxonomy (root 1, Bacteria 2, species Alpha 100 and Beta 200) into DIR.
two_species_taxonomy() {
  mkdir -p "$1"
  printf '1\t|\t1\t|\tno rank\t|\n2\t|\t1\t|\tsuperkingdom\t|\n100\t|\t2\t|\tspecies\t|\n200\t|\t2\t|\tspecies\t|\n' \
    > "$1/nodes.dmp"
  printf '1\t|\troot\t|\t\t|\tscientific name\t|\n2\t|\tBacteria\t|\t\t|\tscientific name\t|\n100\t|\tAlpha\t|\t\t|\tscientific name\t|\n200\t|\tBeta\t|\t\t|\tscientific name\t|\n' \
    > "$1/names.dmp"
}
