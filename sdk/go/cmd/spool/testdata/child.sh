echo child
