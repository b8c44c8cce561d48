//! The hand-written Rust layouts of `ibv_send_wr`, `ibv_wc` (unions bindgen could not express)
//! and the generated `ibv_qp_init_attr`, checked against the C compiler's `sizeof`/`offsetof`.

use rdma_sys::*;
use std::mem::{offset_of, size_of};
use std::process::Command;

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stddef.h>
#include <infiniband/verbs.h>
#define S(t) printf(#t " %zu\n", sizeof(struct t));
#define O(t, f) printf(#t "." #f " %zu\n", offsetof(struct t, f));
int main(void) {
    S(ibv_send_wr) O(ibv_send_wr, sg_list) O(ibv_send_wr, opcode) O(ibv_send_wr, send_flags)
    O(ibv_send_wr, wr) O(ibv_send_wr, qp_type)
    S(ibv_wc) O(ibv_wc, status) O(ibv_wc, byte_len) O(ibv_wc, qp_num) O(ibv_wc, src_qp)
    O(ibv_wc, wc_flags) O(ibv_wc, slid) O(ibv_wc, dlid_path_bits)
    S(ibv_qp_init_attr) O(ibv_qp_init_attr, srq) O(ibv_qp_init_attr, cap) O(ibv_qp_init_attr, qp_type)
    O(ibv_qp_init_attr, sq_sig_all)
    S(ibv_ah_attr) S(ibv_qp_attr) O(ibv_qp_attr, ah_attr) O(ibv_qp_attr, timeout) S(ibv_port_attr)
    return 0;
}
"#;

#[test]
fn rust_layouts_match_c() {
    let dir = std::env::temp_dir().join(format!("ibdyn-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join("layout.c"), dir.join("layout"));
    std::fs::write(&src, PROGRAM).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc).arg(&src).arg("-o").arg(&exe).status();
    let out = match built {
        Ok(s) if s.success() => Command::new(&exe).output().unwrap(),
        other => {
            let _ = std::fs::remove_dir_all(&dir);
            panic!("cannot compile the layout probe with {cc}: {other:?}");
        }
    };
    let _ = std::fs::remove_dir_all(&dir);
    let c: std::collections::HashMap<String, usize> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            l.split_once(' ')
                .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        })
        .collect();
    let rust = [
        ("ibv_send_wr", size_of::<ibv_send_wr>()),
        ("ibv_send_wr.sg_list", offset_of!(ibv_send_wr, sg_list)),
        ("ibv_send_wr.opcode", offset_of!(ibv_send_wr, opcode)),
        (
            "ibv_send_wr.send_flags",
            offset_of!(ibv_send_wr, send_flags),
        ),
        ("ibv_send_wr.wr", offset_of!(ibv_send_wr, wr)),
        ("ibv_send_wr.qp_type", offset_of!(ibv_send_wr, qp_type)),
        ("ibv_wc", size_of::<ibv_wc>()),
        ("ibv_wc.status", offset_of!(ibv_wc, status)),
        ("ibv_wc.byte_len", offset_of!(ibv_wc, byte_len)),
        ("ibv_wc.qp_num", offset_of!(ibv_wc, qp_num)),
        ("ibv_wc.src_qp", offset_of!(ibv_wc, src_qp)),
        ("ibv_wc.wc_flags", offset_of!(ibv_wc, wc_flags)),
        ("ibv_wc.slid", offset_of!(ibv_wc, slid)),
        ("ibv_wc.dlid_path_bits", offset_of!(ibv_wc, dlid_path_bits)),
        ("ibv_qp_init_attr", size_of::<ibv_qp_init_attr>()),
        ("ibv_qp_init_attr.srq", offset_of!(ibv_qp_init_attr, srq)),
        ("ibv_qp_init_attr.cap", offset_of!(ibv_qp_init_attr, cap)),
        (
            "ibv_qp_init_attr.qp_type",
            offset_of!(ibv_qp_init_attr, qp_type),
        ),
        (
            "ibv_qp_init_attr.sq_sig_all",
            offset_of!(ibv_qp_init_attr, sq_sig_all),
        ),
        ("ibv_ah_attr", size_of::<ibv_ah_attr>()),
        ("ibv_qp_attr", size_of::<ibv_qp_attr>()),
        ("ibv_qp_attr.ah_attr", offset_of!(ibv_qp_attr, ah_attr)),
        ("ibv_qp_attr.timeout", offset_of!(ibv_qp_attr, timeout)),
        ("ibv_port_attr", size_of::<ibv_port_attr>()),
    ];
    for (name, r) in rust {
        assert_eq!(
            Some(&r),
            c.get(name),
            "{name}: Rust {r}, C {:?}",
            c.get(name)
        );
    }
}
