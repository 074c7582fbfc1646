//! RandomTextWriter: each map writes about N bytes of random text lines, a key of 5-10
//! words and a value of 20-100 words (Hadoop's shape), to a text file.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::api::{Emitter, Mapper};
use crate::error::Result;
use crate::job::{ComponentSpec, InputFormat, JobSpec};
use crate::registry::Registry;

pub fn register(r: &mut Registry) {
    r.register_mapper("randomtextwriter", |args| {
        Ok(Box::new(RandomTextMapper {
            bytes_per_map: crate::registry::arg("randomtextwriter", args, 0, "bytes per map")?,
        }))
    });
}

const WORDS: &[&str] = &[
    "diurnalness",
    "homoiousian",
    "spiranthic",
    "tetragynian",
    "silverhead",
    "ungreat",
    "lithograph",
    "exploiter",
    "physiologian",
    "by",
    "hellbender",
    "Filipendula",
    "undeterring",
    "antiscolic",
    "pentagamist",
    "hypoid",
    "cacuminal",
    "sertularian",
    "schoolmasterism",
    "nonuple",
    "gallybeggar",
    "phytonic",
    "swearingly",
    "nebular",
    "Confervales",
    "thermochemically",
    "characinoid",
    "cocksuredom",
    "fallacious",
    "feasibleness",
    "debromination",
    "playfellowship",
    "tramplike",
    "testa",
    "participatingly",
    "unaccessible",
    "bromate",
    "experientialist",
    "roughcast",
    "docimastical",
    "choralcelo",
    "blightbird",
    "peptonate",
    "sombreroed",
    "unschematized",
    "antiabolitionist",
    "besagne",
    "mastication",
    "bromic",
    "sviatonosite",
    "cattimandoo",
    "metaphrastical",
    "endotheliomyoma",
    "hysterolysis",
    "unfulminated",
    "Hester",
    "oblongly",
    "blurredness",
    "authorling",
    "chasmy",
    "Scorpaenidae",
    "toxihaemia",
    "Dictograph",
    "Quakerishly",
    "deaf",
    "timbermonger",
    "strammel",
    "Thraupidae",
    "seditious",
    "plerome",
    "Arneb",
    "eristically",
    "serpentinic",
    "glaumrie",
    "socioromantic",
    "apocalypst",
    "tartrous",
    "Bassaris",
    "angiolymphoma",
    "horsefly",
    "kenno",
    "astronomize",
    "euphemious",
    "arsenide",
    "untongued",
    "parabolicness",
    "uvanite",
    "helpless",
    "gemmeous",
    "stormy",
    "templar",
    "erythrodextrin",
    "comism",
    "interfraternal",
    "preparative",
    "parastas",
    "frontoorbital",
    "Ophiosaurus",
    "diopside",
    "serosanguineous",
    "ununiformly",
    "karyological",
    "collegian",
    "allotropic",
    "depravity",
];

pub struct RandomTextMapper {
    bytes_per_map: u64,
}

fn words(rng: &mut StdRng, n: usize, out: &mut Vec<u8>) {
    out.clear();
    for i in 0..n {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(WORDS[rng.gen_range(0..WORDS.len())].as_bytes());
    }
}

impl Mapper for RandomTextMapper {
    /// One call per map: the key is the map's row, which seeds the generator.
    fn map(&mut self, row: &[u8], _value: &[u8], out: &mut dyn Emitter) -> Result<()> {
        let seed = u64::from_be_bytes(row.try_into().unwrap_or([0; 8]));
        let mut rng = StdRng::seed_from_u64(seed);
        let (mut key, mut value) = (Vec::new(), Vec::new());
        let mut written = 0u64;
        while written < self.bytes_per_map {
            let kn = rng.gen_range(5..=10);
            let vn = rng.gen_range(20..=100);
            words(&mut rng, kn, &mut key);
            words(&mut rng, vn, &mut value);
            out.emit(&key, &value)?;
            written += (key.len() + value.len() + 2) as u64;
        }
        Ok(())
    }
}

/// `maps` maps, each writing about `bytes_per_map` bytes of `key\tvalue` text lines.
pub fn job(output: &str, maps: u32, bytes_per_map: u64) -> JobSpec {
    let mut job = JobSpec::new(
        "randomtextwriter",
        Vec::new(),
        output,
        ComponentSpec::with_args("randomtextwriter", [bytes_per_map.to_string()]),
    );
    job.input_format = InputFormat::Generate {
        maps,
        records: u64::from(maps),
    };
    job.num_reduces = 0;
    job
}
