//! Property tests for the request parsers behind the C ABI: the C1 output JSON, PoSt and
//! SnapDeals vanilla proofs with their commitments, the engine config TOML, the plan request
//! and circuit names. Whatever the input, a parser returns a value or an error: it never
//! panics, and a length field that claims more data than there is gets an error before any
//! allocation of that size. (Fuzzing of the same entry points through the C ABI is in
//! go/cuzk/fuzz_test.go.)

use std::ffi::{c_char, CString};

use cuzk::engine::Config;
use cuzk::ffi::plan::cuzk_plan;
use cuzk::ffi::CuzkCode;
use cuzk::proofs::circuits::CircuitKind;
use cuzk::proofs::porep::PoRepRequest;
use cuzk::proofs::post::PostRequest;
use cuzk::proofs::snap::SnapDealsRequest;
use proptest::prelude::*;

/// Registered proof numbers worth trying: every known one, the neighbours and extremes.
fn registered() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..24, Just(u64::MAX), any::<u64>()]
}

/// JSON values shaped like parts of a C1 output (numbers, byte arrays, nested objects).
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        "[a-zA-Z0-9_]{0,24}".prop_map(serde_json::Value::from),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-z_]{1,16}", inner, 0..8)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A C1 output's fields with arbitrary values (and a registered proof name from the real set
/// most of the time).
fn c1_like() -> impl Strategy<Value = Vec<u8>> {
    let names = prop_oneof![
        Just("StackedDrg2KiBV1_1".to_string()),
        Just("StackedDrg32GiBV1_1".to_string()),
        Just("StackedDrg2KiBV1_1_Feat_SyntheticPoRep".to_string()),
        Just("StackedDrg2KiBV1_2_Feat_NonInteractivePoRep".to_string()),
        "[A-Za-z0-9_]{0,40}",
    ];
    (
        names,
        json_value(),
        prop::collection::vec(any::<u8>(), 0..40),
        prop::collection::vec(any::<u8>(), 0..40),
        prop::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(|(name, vanilla, comm_r, comm_d, seed)| {
            serde_json::json!({
                "registered_proof": name,
                "vanilla_proofs": vanilla,
                "comm_r": comm_r,
                "comm_d": comm_d,
                "replica_id": comm_r,
                "seed": seed,
                "ticket": seed,
            })
            .to_string()
            .into_bytes()
        })
}

/// Byte strings that start like bincode: a little-endian length (often huge) then a few bytes.
fn bincode_like() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256),
        (
            prop_oneof![
                Just(u64::MAX),
                Just(1u64 << 60),
                Just(1u64 << 32),
                any::<u64>()
            ],
            prop::collection::vec(any::<u8>(), 0..64)
        )
            .prop_map(|(len, rest)| {
                let mut b = len.to_le_bytes().to_vec();
                b.extend(rest);
                b
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn c1_parsers_return_errors_never_panic(
        c1 in prop_oneof![c1_like(), prop::collection::vec(any::<u8>(), 0..512)],
        registered in registered(),
        sector in any::<u64>(),
        miner in any::<u64>(),
    ) {
        // None of these inputs is a complete, consistent C1 output.
        prop_assert!(PoRepRequest::parse(&c1, registered, sector, miner).is_err());
        prop_assert!(PoRepRequest::parse_any(&c1, sector, miner).is_err());
        prop_assert!(PoRepRequest::circuit_proofs(&c1, sector).is_err());
    }

    #[test]
    fn post_parsers_return_errors_never_panic(
        registered in registered(),
        randomness in prop::collection::vec(any::<u8>(), 0..40),
        miner in any::<u64>(),
        vanilla in prop::collection::vec(bincode_like(), 0..4),
        partition in prop_oneof![0usize..4, Just(usize::MAX)],
    ) {
        let _ = PostRequest::winning(registered, &randomness, miner, &vanilla);
        let _ = PostRequest::window(registered, &randomness, miner, &vanilla, partition);
        let _ = PostRequest::window_all_partitions(registered, &randomness, miner, &vanilla);
    }

    #[test]
    fn snap_parser_returns_errors_never_panics(
        registered in registered(),
        vanilla in prop::collection::vec(bincode_like(), 0..3),
        comm_r_old in prop::collection::vec(any::<u8>(), 0..40),
        comm_r_new in prop::collection::vec(any::<u8>(), 30..34),
        comm_d_new in prop::collection::vec(any::<u8>(), 32..33),
    ) {
        // Random vanilla bytes are never a valid partition proof.
        prop_assert!(
            SnapDealsRequest::parse(registered, &vanilla, &comm_r_old, &comm_r_new, &comm_d_new).is_err()
        );
    }

    #[test]
    fn config_toml_parses_its_own_keys_and_rejects_the_rest(
        synthesis in 0usize..10_000,
        pool in 0usize..10_000,
        budget in any::<u64>(),
        backend in prop_oneof![
            Just("auto".to_string()),
            Just("cpu".to_string()),
            Just("cuda".to_string()),
            "[a-z]{0,8}",
        ],
        junk in "[ -~\n]{0,64}",
    ) {
        let text = format!(
            "synthesis_workers = {synthesis}\npool_buffers = {pool}\nbackend = \"{backend}\"\n"
        );
        let config = Config::from_toml(&text).expect("well-formed keys parse");
        prop_assert_eq!(config.synthesis_workers, synthesis);
        prop_assert_eq!(config.pool_buffers, pool);
        prop_assert_eq!(&config.backend, &backend);
        let valid = config.validate().is_ok();
        let in_range = synthesis >= 1 && pool >= 1 && synthesis <= 4096 && pool <= 4096;
        prop_assert_eq!(valid, in_range && ["auto", "cpu", "cuda"].contains(&backend.as_str()));
        // u64 budgets above i64::MAX are not TOML integers: an error, not a wrapped value.
        let budget_text = format!("memory_budget = {budget}\n");
        match Config::from_toml(&budget_text) {
            Ok(c) => prop_assert_eq!(c.memory_budget, budget),
            Err(e) => prop_assert!(budget > i64::MAX as u64, "{}", e),
        }
        // Arbitrary printable text: a config or an error.
        let _ = Config::from_toml(&junk).map(|c| c.validate());
    }

    #[test]
    fn plan_requests_and_circuit_names_never_panic(
        ram in any::<u64>(),
        gpus in prop::collection::vec(any::<u64>(), 0..3),
        cores in any::<u32>(),
        mix in prop::collection::vec("[a-z0-9-]{0,12}", 0..5),
        raw in "[ -~]{0,80}",
    ) {
        for name in &mix {
            let _ = CircuitKind::parse(name);
        }
        let request = serde_json::json!({
            "ram_bytes": ram, "gpu_bytes": gpus, "cores": cores, "mix": mix,
        })
        .to_string();
        for text in [request, raw] {
            let c = CString::new(text).unwrap();
            let mut out: *mut c_char = std::ptr::null_mut();
            let mut err: *mut c_char = std::ptr::null_mut();
            let code = unsafe { cuzk_plan(c.as_ptr(), &mut out, &mut err) };
            prop_assert!(code == CuzkCode::Ok || code == CuzkCode::InvalidInput, "{:?}", code);
            unsafe {
                cuzk::ffi::memory::cuzk_string_free(out);
                cuzk::ffi::memory::cuzk_string_free(err);
            }
        }
    }
}

#[test]
fn a_vanilla_proof_claiming_an_exabyte_is_an_error_without_the_allocation() {
    // A bincode sequence length of 2^60 followed by nothing: the parsers must fail on the
    // missing data, not reserve 2^60 elements first (which would abort the process).
    let claim = (1u64 << 60).to_le_bytes().to_vec();
    let vanilla = vec![claim.clone(), claim.clone()];
    let randomness = [7u8; 32];
    assert!(PostRequest::winning(0, &randomness, 1000, &vanilla[..1]).is_err());
    assert!(PostRequest::window(10, &randomness, 1000, &vanilla, 0).is_err());
    assert!(SnapDealsRequest::parse(0, &vanilla[..1], &[0; 32], &[0; 32], &[0; 32]).is_err());
}
