//! Snapshot reports: `SnapshotDiffReport` (GETSNAPSHOTDIFF), `SnapshotDiffReportListing`
//! (GETSNAPSHOTDIFFLISTING), `SnapshottableDirectoryList` and `SnapshotList`.

use serde_json::{json, Map, Value};
use tusk_proto::hdfs as h;

use super::file_status_fields;

/// `{"SnapshotDiffReport":{"diffList":[{"sourcePath","targetPath","type"}],
/// "fromSnapshot","snapshotRoot","toSnapshot"}}`: paths relative to the root, types as
/// `DiffType` names; a snapshot name not given (the current tree) is `null`.
pub fn snapshot_diff_report(r: &h::SnapshotDiffReportProto) -> Value {
    let entries: Vec<Value> = r
        .diff_report_entries
        .iter()
        .map(|e| {
            let mut m = Map::new();
            m.insert("type".into(), diff_type(&e.modification_label).into());
            m.insert("sourcePath".into(), text(&e.fullpath).into());
            if let Some(target) = &e.target_path {
                m.insert("targetPath".into(), text(target).into());
            }
            Value::Object(m)
        })
        .collect();
    let name = |n: &str| (!n.is_empty()).then(|| n.to_string());
    json!({
        "SnapshotDiffReport": {
            "diffList": entries,
            "fromSnapshot": name(&r.from_snapshot),
            "snapshotRoot": r.snapshot_root,
            "toSnapshot": name(&r.to_snapshot),
        }
    })
}

/// `SnapshotDiffReport.DiffType`'s name for an RPC modification label.
fn diff_type(label: &str) -> &'static str {
    match label {
        "+" => "CREATE",
        "-" => "DELETE",
        "R" => "RENAME",
        _ => "MODIFY",
    }
}

/// `{"SnapshotDiffReportListing":{"createList","deleteList","isFromEarlier","lastIndex",
/// "lastPath","modifyList"}}`, entries as `{"dirId","fileId","isReference","sourcePath",
/// "targetPath"}`; `lastPath` and `lastIndex` are where the next page starts (`""` and
/// `-1`: there is none).
pub fn snapshot_diff_report_listing(l: &h::SnapshotDiffReportListingProto) -> Value {
    let list = |entries: &[h::SnapshotDiffReportListingEntryProto]| -> Vec<Value> {
        entries.iter().map(listing_entry).collect()
    };
    let (last_path, last_index) = l
        .cursor
        .as_ref()
        .map_or((String::new(), -1), |c| (text(&c.start_path), c.index));
    json!({
        "SnapshotDiffReportListing": {
            "createList": list(&l.created_entries),
            "deleteList": list(&l.deleted_entries),
            "isFromEarlier": l.is_from_earlier,
            "lastIndex": last_index,
            "lastPath": last_path,
            "modifyList": list(&l.modified_entries),
        }
    })
}

fn listing_entry(e: &h::SnapshotDiffReportListingEntryProto) -> Value {
    let mut m = Map::new();
    m.insert("dirId".into(), e.dir_id.into());
    m.insert("fileId".into(), e.file_id.unwrap_or(0).into());
    m.insert("isReference".into(), e.is_reference.into());
    m.insert("sourcePath".into(), text(&e.fullpath).into());
    if let Some(target) = &e.target_path {
        m.insert("targetPath".into(), text(target).into());
    }
    Value::Object(m)
}

/// `{"SnapshottableDirectoryList":[{"dirStatus","parentFullPath","snapshotNumber",
/// "snapshotQuota"}]}`; `null` when the user has none.
pub fn snapshottable_directory_list(l: Option<&h::SnapshottableDirectoryListingProto>) -> Value {
    let Some(l) = l else {
        return json!({ "SnapshottableDirectoryList": null });
    };
    let dirs: Vec<Value> = l
        .snapshottable_dir_listing
        .iter()
        .map(|d| {
            json!({
                "dirStatus": file_status_fields(&d.dir_status),
                "parentFullPath": text(&d.parent_fullpath),
                "snapshotNumber": d.snapshot_number,
                "snapshotQuota": d.snapshot_quota,
            })
        })
        .collect();
    json!({ "SnapshottableDirectoryList": dirs })
}

/// `{"SnapshotList":[{"deletionStatus","dirStatus","fullPath","snapshotID"}]}`, the
/// full path as `SnapshotStatus.getSnapshotPath` builds it (`/dir/.snapshot/s1`).
pub fn snapshot_list(l: &h::SnapshotListingProto) -> Value {
    let snapshots: Vec<Value> = l
        .snapshot_listing
        .iter()
        .map(|s| {
            let root = text(&s.parent_fullpath);
            let root = if root.is_empty() { "/".into() } else { root };
            let name = text(&s.dir_status.path);
            json!({
                "deletionStatus": if s.is_deleted { "DELETED" } else { "ACTIVE" },
                "dirStatus": file_status_fields(&s.dir_status),
                "fullPath": format!("{}/.snapshot/{name}", root.trim_end_matches('/')),
                "snapshotID": s.snapshot_id,
            })
        })
        .collect();
    json!({ "SnapshotList": snapshots })
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_report_names_its_types_and_the_current_tree_is_null() {
        let entry =
            |label: &str, path: &str, target: Option<&str>| h::SnapshotDiffReportEntryProto {
                fullpath: path.as_bytes().to_vec().into(),
                modification_label: label.into(),
                target_path: target.map(|t| t.as_bytes().to_vec().into()),
            };
        let report = h::SnapshotDiffReportProto {
            snapshot_root: "/d".into(),
            from_snapshot: "s1".into(),
            to_snapshot: String::new(),
            diff_report_entries: vec![
                entry("M", "", None),
                entry("+", "new", None),
                entry("R", "a", Some("b")),
            ],
        };
        assert_eq!(
            snapshot_diff_report(&report).to_string(),
            r#"{"SnapshotDiffReport":{"diffList":[{"sourcePath":"","type":"MODIFY"},{"sourcePath":"new","type":"CREATE"},{"sourcePath":"a","targetPath":"b","type":"RENAME"}],"fromSnapshot":"s1","snapshotRoot":"/d","toSnapshot":null}}"#
        );
    }

    #[test]
    fn a_snapshot_is_listed_under_its_roots_snapshot_directory() {
        let list = h::SnapshotListingProto {
            snapshot_listing: vec![h::SnapshotStatusProto {
                dir_status: h::HdfsFileStatusProto {
                    path: b"s1".to_vec().into(),
                    ..Default::default()
                },
                snapshot_id: 3,
                parent_fullpath: b"/d".to_vec().into(),
                is_deleted: false,
            }],
        };
        let v = snapshot_list(&list);
        assert_eq!(v["SnapshotList"][0]["fullPath"], "/d/.snapshot/s1");
        assert_eq!(v["SnapshotList"][0]["deletionStatus"], "ACTIVE");
        assert_eq!(v["SnapshotList"][0]["snapshotID"], 3);
        assert_eq!(v["SnapshotList"][0]["dirStatus"]["pathSuffix"], "s1");
        assert_eq!(
            snapshottable_directory_list(None).to_string(),
            r#"{"SnapshottableDirectoryList":null}"#
        );
    }
}
