//! The dynamic-process layer an application links: spawn and spawn-multiple, the children's
//! parent intercommunicator, ports, connect / accept and the name service client. It talks
//! to the process manager (`ibdyn-launcher`) only through PMI.

pub mod dynamic;
