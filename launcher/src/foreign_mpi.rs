//! A program built with Open MPI, run by `ibdyn run`: Open MPI's processes find their job
//! through PMIx, which ibdyn does not serve, so each rank starts alone as a job of one (a
//! singleton) and the job computes nonsense without an error. The launcher reads the
//! program's dynamic section (ELF64, little-endian) and says so before it starts anything.
//! MPICH's and Intel MPI's programs speak PMI-1 and run as they are.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Open MPI's libraries (3.x to 5.x) carry the SONAME version 40.
fn is_open_mpi_library(name: &str) -> bool {
    name.starts_with("libmpi") && name.ends_with(".so.40")
}

/// What to tell the user before running `path`, if it is built with Open MPI.
pub(crate) fn warning(program: &str, path: &Path) -> Option<String> {
    let libs = needed_libraries(path)?;
    let lib = libs.iter().find(|l| is_open_mpi_library(l))?;
    Some(format!(
        "{program} is built with Open MPI (it needs {lib}): Open MPI's processes find their job \
         through PMIx, which ibdyn does not serve, so each rank would run alone as a job of one. \
         Build it with `ibdyn cc` (ibdyn's MPI), with MPICH's mpicc (PMI-1), or with an \
         mpicc_abi and run it with `--abi`"
    ))
}

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;
const DT_STRSZ: u64 = 10;
/// Bounds on what is read from a file that may be anything.
const MAX_HEADERS: usize = 4096;
const MAX_TABLE: u64 = 16 << 20;

fn read_at(f: &File, offset: u64, len: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0; len];
    f.read_exact_at(&mut buf, offset).ok()?;
    Some(buf)
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The `DT_NEEDED` names of an ELF64 little-endian file; None for anything else (a script,
/// a 32-bit or big-endian binary, a damaged file).
pub(crate) fn needed_libraries(path: &Path) -> Option<Vec<String>> {
    let f = File::open(path).ok()?;
    let header = read_at(&f, 0, 64)?;
    if header[..4] != *b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return None;
    }
    let phoff = u64_at(&header, 0x20)?;
    let phentsize = usize::from(u16_at(&header, 0x36)?);
    let phnum = usize::from(u16_at(&header, 0x38)?);
    if phentsize < 56 || phnum > MAX_HEADERS {
        return None;
    }
    let table = read_at(&f, phoff, phentsize * phnum)?;
    // (type, offset, vaddr, filesz) of each program header.
    let headers: Vec<(u32, u64, u64, u64)> = table
        .chunks_exact(phentsize)
        .map(|h| Some((u32_at(h, 0)?, u64_at(h, 8)?, u64_at(h, 16)?, u64_at(h, 32)?)))
        .collect::<Option<_>>()?;
    let &(_, dyn_off, _, dyn_size) = headers.iter().find(|h| h.0 == PT_DYNAMIC)?;
    if dyn_size > MAX_TABLE {
        return None;
    }
    let dynamic = read_at(&f, dyn_off, dyn_size as usize)?;
    let (mut needed, mut strtab, mut strsz) = (Vec::new(), None, None);
    for entry in dynamic.chunks_exact(16) {
        let (tag, val) = (u64_at(entry, 0)?, u64_at(entry, 8)?);
        match tag {
            0 => break,
            DT_NEEDED => needed.push(val),
            DT_STRTAB => strtab = Some(val),
            DT_STRSZ => strsz = Some(val),
            _ => {}
        }
    }
    let (strtab, strsz) = (strtab?, strsz.filter(|&s| s <= MAX_TABLE)?);
    // DT_STRTAB is an address: the file offset is that of the loaded segment holding it.
    let &(_, seg_off, seg_addr, _) = headers
        .iter()
        .find(|&&(t, _, addr, size)| t == PT_LOAD && (addr..addr + size).contains(&strtab))?;
    let strings = read_at(&f, strtab - seg_addr + seg_off, strsz as usize)?;
    needed
        .iter()
        .map(|&at| {
            let s = strings.get(at as usize..)?;
            let end = s.iter().position(|&b| b == 0)?;
            Some(String::from_utf8_lossy(&s[..end]).into_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dynamic_program_names_its_libraries() {
        let libs = needed_libraries(Path::new("/bin/sh")).expect("an ELF64 LE program");
        assert!(libs.iter().any(|l| l.starts_with("libc.so")), "{libs:?}");
        assert_eq!(warning("sh", Path::new("/bin/sh")), None);
    }

    #[test]
    fn anything_else_is_not_read_as_elf() {
        let dir = std::env::temp_dir().join(format!("ibdyn-elf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("script");
        std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        assert_eq!(needed_libraries(&script), None);
        // A header that claims more than the file holds.
        let mut bad = b"\x7fELF\x02\x01".to_vec();
        bad.resize(64, 0xff);
        std::fs::write(&script, &bad).unwrap();
        assert_eq!(needed_libraries(&script), None);
        assert_eq!(needed_libraries(&dir.join("missing")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn open_mpis_libraries_are_told_from_mpichs() {
        assert!(is_open_mpi_library("libmpi.so.40"));
        assert!(is_open_mpi_library("libmpi_mpifh.so.40"));
        assert!(!is_open_mpi_library("libmpi.so.12"));
        assert!(!is_open_mpi_library("libmpi_abi.so.1"));
    }
}
