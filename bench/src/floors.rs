//! Intra-node limits: bare shared-memory flag ping-pong, memcpy and process_vm_readv bandwidth.
