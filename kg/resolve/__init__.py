"""The resolve stage: one node per real thing (people, publications, organizations,
venues), the basis of each merge, near misses and the merge report (`identity`)."""
