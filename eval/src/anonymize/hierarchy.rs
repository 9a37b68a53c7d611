//! Value generalization hierarchies read from the `leaf;level 1;…;*` files of `eval/hierarchies/` (see the
//! README there) into the parent arrays of `dpmo::generalize` (node 0 is the root ⊥).

use anyhow::{bail, ensure, Context, Result};
use std::collections::HashMap;

/// One attribute's hierarchy: the parent array the core takes, the node names and the leaves by name.
pub struct Vgh {
    /// Attribute name (the column of the data).
    pub attribute: String,
    /// parents[v]: the parent of node v; the root 0 is its own parent.
    pub parents: Vec<u32>,
    /// Node names (the root is `*`).
    #[cfg_attr(not(test), allow(dead_code))]
    pub names: Vec<String>,
    /// Depth of every node (0 at the root).
    pub depth: Vec<usize>,
    /// The leaf id of each data value.
    pub leaves: HashMap<String, u32>,
    /// The height: every leaf is at this depth.
    pub height: usize,
}

impl Vgh {
    /// Parses a hierarchy file. Errors: an empty file, rows of different lengths, a row not ending in `*`,
    /// an inner node with two parents, a leaf named twice or also an inner node.
    pub fn parse(attribute: &str, text: &str) -> Result<Vgh> {
        let mut parents = vec![0u32];
        let mut names = vec!["*".to_string()];
        let mut depth = vec![0usize];
        // (depth, name) → node id; depth keeps equal names at different levels apart.
        let mut ids: HashMap<(usize, String), u32> = HashMap::new();
        let mut leaves = HashMap::new();
        let mut height = None;
        for (line_no, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let where_ = || format!("hierarchy of {attribute}, line {}", line_no + 1);
            let fields: Vec<&str> = line.split(';').map(str::trim).collect();
            ensure!(
                fields.len() >= 2 && fields[fields.len() - 1] == "*",
                "{}: a row is `leaf;…;*`",
                where_()
            );
            let h = fields.len() - 1;
            if *height.get_or_insert(h) != h {
                bail!(
                    "{}: {} levels where earlier rows have {}",
                    where_(),
                    h,
                    height.unwrap_or(0)
                );
            }
            // From the root down: fields[h − d] is the node at depth d.
            let mut parent = 0u32;
            for d in 1..=h {
                let name = fields[h - d];
                ensure!(
                    !name.is_empty() && name != "*",
                    "{}: an empty or `*` inner value",
                    where_()
                );
                let id = match ids.get(&(d, name.to_string())) {
                    Some(&id) => {
                        ensure!(
                            parents[id as usize] == parent,
                            "{}: {name:?} under two different parents",
                            where_()
                        );
                        ensure!(d < h, "{}: leaf {name:?} listed twice", where_());
                        id
                    }
                    None => {
                        let id = parents.len() as u32;
                        parents.push(parent);
                        names.push(name.to_string());
                        depth.push(d);
                        ids.insert((d, name.to_string()), id);
                        id
                    }
                };
                parent = id;
            }
            leaves.insert(fields[0].to_string(), parent);
        }
        let height = height.with_context(|| format!("hierarchy of {attribute}: no row"))?;
        Ok(Vgh {
            attribute: attribute.into(),
            parents,
            names,
            depth,
            leaves,
            height,
        })
    }

    /// The ancestor of node v at depth d ≤ depth(v).
    #[cfg(test)]
    pub fn ancestor_at(&self, mut v: u32, d: usize) -> u32 {
        while self.depth[v as usize] > d {
            v = self.parents[v as usize];
        }
        v
    }
}

/// The attributes of Adult with a hierarchy, in the order of the lattice, and their files (compiled in).
pub const ADULT: [(&str, &str); 7] = [
    ("age", include_str!("../../hierarchies/adult/age.csv")),
    ("workclass", include_str!("../../hierarchies/adult/workclass.csv")),
    ("education", include_str!("../../hierarchies/adult/education.csv")),
    (
        "marital-status",
        include_str!("../../hierarchies/adult/marital-status.csv"),
    ),
    ("race", include_str!("../../hierarchies/adult/race.csv")),
    ("sex", include_str!("../../hierarchies/adult/sex.csv")),
    (
        "native-country",
        include_str!("../../hierarchies/adult/native-country.csv"),
    ),
];

/// The seven hierarchies of Adult.
pub fn adult() -> Result<Vec<Vgh>> {
    ADULT.iter().map(|(a, text)| Vgh::parse(a, text)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adult_hierarchies_have_the_documented_shape() {
        let h = adult().unwrap();
        let shape: Vec<(usize, usize)> = h.iter().map(|v| (v.leaves.len(), v.height)).collect();
        assert_eq!(shape, [(74, 4), (8, 2), (16, 3), (7, 2), (5, 1), (2, 1), (41, 2)]);
        let n: usize = h.iter().map(|v| v.height + 1).product();
        assert_eq!(n, 2160);
        let age = &h[0];
        let a37 = age.leaves["37"];
        let names: Vec<&str> = (0..=4)
            .rev()
            .map(|d| age.names[age.ancestor_at(a37, d) as usize].as_str())
            .collect();
        assert_eq!(names, ["37", "[35-40)", "[30-40)", "[20-40)", "*"]);
    }

    #[test]
    fn malformed_hierarchies_are_refused() {
        assert!(Vgh::parse("x", "a;b;*\nc;*\n").is_err()); // ragged
        assert!(Vgh::parse("x", "a;b;*\na;c;*\n").is_err()); // leaf twice
        assert!(Vgh::parse("x", "a;b;*\nc;b;*\n").is_ok());
        assert!(Vgh::parse("x", "a;b;c;*\nd;b;e;*\n").is_err()); // b under two parents
        assert!(Vgh::parse("x", "a;b\n").is_err()); // no root
        assert!(Vgh::parse("x", "").is_err());
    }
}
