"""`kg cv`: every fact of each seed document in the CV (Markdown, and the PDF's text),
JSON Resume against the published schema, LaTeX escaping, options and errors.

The expected values below are written by hand from the seed documents (the line of the
seed is quoted beside each); dates are written the way the CV prints them (`Sep 2021`
for the seed's "Sept. 2021", `present` for "Present").
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
from conftest import REPO, write

from kg.cli import main
from kg.config import load_config
from kg.model import PartialDate
from kg.pipeline import render_cv, resolve_project
from kg.publish.cv.build import build_cv, cv_of
from kg.publish.cv.formats import render_cv as render
from kg.publish.cv.model import Options
from kg.publish.cv.pdf import compile_pdf, engine_for
from kg.publish.cv.render import render_text, tex_escape

SCHEMA = Path(__file__).parent / "vendor" / "jsonresume" / "schema.json"


@dataclass(frozen=True)
class Seed:
    papers: tuple[tuple[str, str], ...]  # (title, authors as printed, markers kept)
    entries: tuple[tuple[str, ...], ...]  # pieces that one entry of the CV holds


SEEDS = {
    "yihao-zhao": Seed(  # 001_1915d06aae2a92a9.txt
        papers=(
            (
                "SeaLLM: Service-Aware and Latency-Optimized Resource Sharing for Large "
                "Language Model Inference",
                "Yihao Zhao, Jiadun Chen, Peng Sun, Lei Li, Xuanzhe Liu, Xin Jin",
            ),
            (
                "MuxFlow: Efficient GPU Sharing in Production-Level Clusters with More Than "
                "10,000 GPUs",
                "Xuanzhe Liu (Advisor), Yihao Zhao, Shufan Liu, Xiang Li, Yibo Zhu, Xin Liu, "
                "Xin Jin",
            ),
            (
                "GreenFlow: A Carbon Efficient Scheduler for Deep Learning Workloads",
                "Diandian Gu, Yihao Zhao, Peng Sun, Xin Jin, Xuanzhe Liu",
            ),
            (
                "How Useful is Communication Scheduling for Distributed Training?",
                "Yihao Zhao, Xuanzhe Liu, Xin Jin",
            ),
            (
                "Klotski: Efficient and Safe Network Migration of Large Production Datacenters",
                "Yihao Zhao*, Xiaoxiang Zhang*, Hang Zhu, Ying Zhang, Zhaodong Wang, Yuandong "
                "Tian, Alex Nikulkov, Joao Ferreira, Xuanzhe Liu, Xin Jin",
            ),
            (
                "ElasticFlow: An Elastic Serverless Training Platform for Distributed Deep "
                "Learning",
                "Diandian Gu*, Yihao Zhao*, Yinmin Zhong, Yifan Xiong, Zhenhua Han, Peng Cheng, "
                "Fan Yang, Gang Huang, Xin Jin, Xuanzhe Liu",
            ),
            (
                "Multi-Resource Interleaving for Deep Learning Training",
                "Yihao Zhao, Yuanqiang Liu, Yanghua Peng, Yibo Zhu, Xuanzhe Liu, Xin Jin",
            ),
            (
                "Unpaired Image-to-Image Translation using Adversarial Consistency Loss",
                "Yihao Zhao, Ruihai Wu, Hao Dong",
            ),
        ),
        entries=(
            # "Peking University (PKU) / Ph.D., School of Computer Science / Advisor: Xuanzhe
            # Liu / Co-advisor: Xin Jin / Beijing, China / Sept. 2021 – Present"
            ("Peking University", "Ph.D.", "School of Computer Science", "Sep 2021 – present"),
            ("Advisor: Xuanzhe Liu",),
            ("Co-advisor: Xin Jin",),
            # "B.E. in Computer Science, Turing Class / Overall GPA: 3.78/4.0 (top 7%) /
            # Sept. 2017- Jul. 2021"
            (
                "Peking University",
                "B.E.",
                "Computer Science",
                "Turing Class",
                "Sep 2017 – Jul 2021",
            ),
            ("3.78/4.0", "top 7%"),
            # "Shanghai AI Lab, research intern / Jun. 2024 – Feb. 2025 / Advisor: Peng Sun"
            ("Shanghai AI Lab", "research intern", "Jun 2024 – Feb 2025"),
            ("Peng Sun",),
            # "ByteDance, research intern / Jan. 2021 – Sept. 2023"
            ("ByteDance", "research intern", "Jan 2021 – Sep 2023"),
            ("Xin Liu, Yanghua Peng, Yibo Zhu",),
            # Teaching Experience
            ("Distributed Machine Learning", "Fall 2022, Fall 2023"),
            ("Introduction to Computing (A)", "Fall 2021"),
            ("Introduction to Computer Systems", "Fall 2019"),
            # Awards and Honors
            ("Top Ten Academic Achievers (Nomination Award)", "Dec 2024"),
            ("Presidential Scholarship", "Jun 2023"),
            ("Jiukun Prize", "Oct 2022"),
            ("Third Prize, Peking University Award", "Oct 2020"),
            ("Merit Student Award", "Oct 2020"),
            ("First Prize, Turing Benjing Award", "Oct 2019"),
            ("Benz Scholarship", "Only 2 for Grade 2017, EECS", "Oct 2018"),
            ("Merit Student Award", "Oct 2018"),
            # Services: "Invited Reviewer / IEEE TSC, IEEE/ACM TON"; "Sub-Reviewer / SIGIR
            # 2023, ICDCS 2023, ICWS 2023, APNET 2023"
            ("Invited Reviewer", "IEEE TSC"),
            ("Invited Reviewer", "IEEE/ACM TON"),
            ("Sub-Reviewer", "SIGIR 2023"),
            ("Sub-Reviewer", "ICDCS 2023"),
            ("Sub-Reviewer", "ICWS 2023"),
            ("Sub-Reviewer", "APNET 2023"),
            # Skills
            ("Programming Languages", "Python, C++"),
            ("Deep Learning Frameworks", "PyTorch, TensorFlow"),
            ("Software & OS", "LaTeX, MS Office, Linux"),
        ),
    ),
    "hanyu-zhao": Seed(  # 002_d5e130007bd0772e.txt
        papers=(
            (
                "Rubick: Exploiting Job Reconfigurability for Deep Learning Cluster Scheduling",
                "Xinyi Zhang, Hanyu Zhao, Wencong Xiao, Xianyan Jia, Fei Xu, Yong Li, Wei Lin, "
                "Fangming Liu",
            ),
            (
                "Llumnix: Dynamic Scheduling for Large Language Model Serving",
                "Biao Sun*, Ziming Huang*, Hanyu Zhao*, Wencong Xiao, Xinyi Zhang, Yong Li, "
                "Wei Lin",
            ),
            (
                "EasyScale: Elastic Training with Consistent Accuracy and Improved Utilization "
                "on GPUs",
                "Mingzhen Li, Wencong Xiao, Hailong Yang, Biao Sun, Hanyu Zhao, Shiru Ren, "
                "Zhongzhi Luan, Xianyan Jia, Yi Liu, Yong Li, Wei Lin, Depei Qian",
            ),
            (
                "GoldMiner: Elastic Scaling of Training Data Pre-Processing Pipelines for Deep "
                "Learning",
                "Hanyu Zhao, Zhi Yang, Yu Cheng, Chao Tian, Shiru Ren, Wencong Xiao, Man Yuan, "
                "Langshi Chen, Kaibo Liu, Yang Zhang, Yong Li, Wei Lin",
            ),
            (
                "SiloD: A Co-design of Caching and Scheduling for Deep Learning Clusters",
                "Hanyu Zhao*, Zhenhua Han*, Zhi Yang, Quanlu Zhang, Mingxia Li, Fan Yang, "
                "Qianxi Zhang, Binyang Li, Yuqing Yang, Lili Qiu, Lintao Zhang, Lidong Zhou",
            ),
            (
                "HiveD: Sharing a GPU Cluster for Deep Learning with Guarantees",
                "Hanyu Zhao*, Zhenhua Han*, Zhi Yang, Quanlu Zhang, Fan Yang, Lidong Zhou, "
                "Mao Yang, Francis C.M. Lau, Yuqi Wang, Yifan Xiong, Bin Wang",
            ),
            (
                "SDPaxos: Building Efficient Semi-Decentralized Geo-replicated State Machines",
                "Hanyu Zhao, Quanlu Zhang, Zhi Yang, Ming Wu, Yafei Dai",
            ),
            (
                "Gandiva: Introspective Cluster Scheduling for Deep Learning",
                "Wencong Xiao, Romil Bhardwaj, Ramachandran Ramjee, Muthian Sivathanu, Nipun "
                "Kwatra, Zhenhua Han, Pratyush Patel, Xuan Peng, Hanyu Zhao, Quanlu Zhang, "
                "Fan Yang, Lidong Zhou",
            ),
        ),
        entries=(
            # "I am Hanyu Zhao (赵汉宇)"
            ("Hanyu Zhao", "赵汉宇"),
            # "I obtained my PhD degree from Peking University in 2021, supervised by Prof.
            # Yafei Dai and Prof. Zhi Yang."
            ("Peking University", "PhD", "2021"),
            ("Prof. Yafei Dai, Prof. Zhi Yang",),
            # "an engineer and researcher at the Platform for Artificial Intelligence (PAI)
            # team of Alibaba Cloud"
            ("Alibaba Cloud", "Platform for Artificial Intelligence (PAI)", "present"),
            # "an intern at the Systems Research Group of Microsoft Research Asia from 2017
            # to 2020"
            ("Microsoft Research Asia", "Systems Research Group", "2017 – 2020"),
        ),
    ),
    "yinmin-zhong": Seed(  # 003_7e5a0f4588ef17b7.txt
        papers=(
            (
                "RLHFuse: Efficient RLHF Training for Large Language Models with Inter- and "
                "Intra-Stage Fusion",
                "Yinmin Zhong, Zili Zhang, Bingyang Wu, Shengyu Liu, Yukun Chen, Changyi Wan, "
                "Hanpeng Hu, Lei Xia, Ranchen Ming, Yibo Zhu, Xin Jin",
            ),
            (
                "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized Large "
                "Language Model Serving",
                "Yinmin Zhong, Shengyu Liu, Junda Chen, Jianbo Hu, Yibo Zhu, Xuanzhe Liu, "
                "Xin Jin, Hao Zhang",
            ),
            (
                "Scaling Large Language Model Training to More Than 10,000 GPUs",
                "Ziheng Jiang*, Haibin Lin*, Yinmin Zhong*, Qi Huang, Yangrui Chen, Zhi Zhang, "
                "Yanghua Peng, Xiang Li, Cong Xie, Shibiao Nong, Yulu Jia, Sun He, Hongmin Chen, "
                "Zhihao Bai, Qi Hou, Shipeng Yan, Ding Zhou, Yiyao Sheng, Zhuo Jiang, Haohan Xu, "
                "Haoran Wei, Zhang Zhang, Pengfei Nie, Leqi Zou, Sida Zhao, Liang Xiang, "
                "Zherui Liu, Zhe Li, Xiaoying Jia, Jianxi Ye, Xin Jin, Xin Liu",
            ),
            (
                "AlpaServe: Statistical Multiplexing with Model Parallelism for Deep Learning "
                "Serving",
                "Zhuohan Li*, Lianmin Zheng*, Yinmin Zhong*, Vincent Liu, Ying Sheng, Xin Jin, "
                "Yanping Huang, Zhifeng Chen, Hao Zhang, Joseph E. Gonzalez, Ion Stoica",
            ),
            (
                "LoongServe: Efficiently Serving Long-Context Large Language Models with "
                "Elastic Sequence Parallelism",
                "Bingyang Wu, Shengyu Liu, Yinmin Zhong, Peng Sun, Xuanzhe Liu, Xin Jin",
            ),
            (
                "Aquifer: Transparent Microsecond-scale Scheduling for vRAN Workloads",
                "Yunshan Jia, Yinmin Zhong, Meng Wang, Jiaqi Gao, Pengyu Zhang, Xuanzhe Liu, "
                "Xin Jin",
            ),
            (
                "DistMind: Efficient Resource Disaggregation for Deep Learning Workloads",
                "Xin Jin, Zhihao Bai, Zhen Zhang, Yibo Zhu, Yinmin Zhong, Xuanzhe Liu",
            ),
            (
                "ElasticFlow: An Elastic Serverless Training Platform for Distributed Deep "
                "Learning",
                "Diandian Gu, Yihao Zhao, Yinmin Zhong, Yifan Xiong, Zhenhua Han, Peng Cheng, "
                "Fan Yang, Gang Huang, Xin Jin, Xuanzhe Liu",
            ),
            (
                "DistTrain: Addressing Model and Data Heterogeneity with Disaggregated Training "
                "for Multimodal Large Language Models",
                "Zili Zhang, Yinmin Zhong, Ranchen Ming, Hanpeng Hu, Jianjian Sun, Zheng Ge, "
                "Yibo Zhu, Xin Jin",
            ),
            (
                "Fast Distributed Inference Serving for Large Language Models",
                "Bingyang Wu*, Yinmin Zhong*, Zili Zhang*, Gang Huang, Xuanzhe Liu, Xin Jin",
            ),
        ),
        entries=(
            # "Peking University / Ph.D. in Computer Science. / Advisor: Xin Jin / Sep 2022 -
            # Present"
            ("Peking University", "Ph.D.", "Computer Science", "Sep 2022 – present"),
            # "B.S. in Computer Science. / Sep 2018 - June 2022 / GPA: 3.79/4.0 (top 5%)"
            ("Peking University", "B.S.", "Computer Science", "Sep 2018 – Jun 2022"),
            ("3.79/4.0", "top 5%"),
            # EXPERIENCE
            ("StepFun System Team", "Research Intern", "May 2024 – present"),
            ("Ranchen Ming, Yibo Zhu",),
            ("ByteDance AML Team", "Research Intern", "Aug 2023 – May 2024"),
            ("Ziheng Jiang, Xin Liu",),
            ("Peking University", "Research Assistant", "Sep 2022 – present"),
            ("Alibaba DAMO Academy", "Research Intern", "Sep 2021 – Sep 2022"),
            ("Pengyu Zhang",),
            ("AI Innovation Center, Peking University", "Software Engineer Intern"),
            ("Sep 2020 – Mar 2021",),
            ("Ming Lei",),
            # TEACHING: "Head TA, Operating Systems (Honor Track) 2024 Spring" (and 2023
            # Spring, 2022 Spring); "TA, Introduction to Computing 2022 Fall"; "TA,
            # Introduction to Computer System 2020 Fall"
            ("Operating Systems (Honor Track)", "Head TA", "2024 Spring"),
            ("Operating Systems (Honor Track)", "Head TA", "2023 Spring"),
            ("Operating Systems (Honor Track)", "Head TA", "2022 Spring"),
            ("Introduction to Computing", "TA", "2022 Fall"),
            ("Introduction to Computer System", "TA", "2020 Fall"),
            # SERVICES
            ("Shadow Program Committee", "Eurosys 2025"),
            ("Artifacts Evaluation Committee", "OSDI/ATC 2024"),
            ("Artifacts Evaluation Committee", "SIGCOMM 2024"),
            ("Artifacts Evaluation Committee", "OSDI/ATC 2023"),
            # AWARDS & HONORS (the Merit Student award three times)
            ("Merit Student of Peking University", "2024"),
            ("Outstanding Graduate of Peking University", "2022"),
            ("Third Prize Scholarship of Peking University", "2020"),
            ("Merit Student of Peking University", "2019"),
            ("Tian Chuang Scholarship", "2019"),
            ("Zhongying Tang Scholarship", "2019"),
            ("Merit Student of Peking University", "2018"),
        ),
    ),
    "liangyu-zhao": Seed(  # 004_329dcfc937296149.txt
        papers=(
            (
                "ForestColl: Throughput-Optimal Collective Communications on Heterogeneous "
                "Network Fabrics",
                "Liangyu Zhao, Saeed Maleki, Yuanhong Wang, Zezhou Wang, Ziyue Yang, Hossein "
                "Pourreza, Arvind Krishnamurthy",
            ),
            (
                "FLASH: Fast All-to-All Communication in GPU Clusters",
                "Yiran Lei, Dongjoo Lee, Liangyu Zhao, Daniar Kurniawan, Chanmyeong Kim, "
                "Heetaek Jeong, Changsu Kim, Hyeonseong Choi, Liangcheng Yu, Arvind "
                "Krishnamurthy, Justine Sherry, Eriko Nurvitadhi",
            ),
            (
                "Tactic: Adaptive Sparse Attention with Clustering and Distribution Fitting for "
                "Long-Context LLMs",
                "Kan Zhu*, Tian Tang*, Qinyu Xu*, Yile Gu, Zhichen Zeng, Rohan Kadekodi, "
                "Liangyu Zhao, Ang Li, Arvind Krishnamurthy, Baris Kasikci",
            ),
            (
                "NanoFlow: Towards Optimal Large Language Model Serving Throughput",
                "Kan Zhu, Yufei Gao, Yilong Zhao, Liangyu Zhao, Gefei Zuo, Yile Gu, Dedong Xie, "
                "Tian Tang, Qinyu Xu, Zihao Ye, Keisuke Kamahori, Chien-Yu Lin, Ziren Wang, "
                "Stephanie Wang, Arvind Krishnamurthy, Baris Kasikci",
            ),
            (
                "Efficient Direct-Connect Topologies for Collective Communications",
                "Liangyu Zhao, Siddharth Pal, Tapan Chugh, Weiyang Wang, Jason Fantl, "
                "Prithwish Basu, Joud Khoury, Arvind Krishnamurthy",
            ),
            (
                "Rethinking Machine Learning Collective Communication as a Multi-Commodity "
                "Flow Problem",
                "Xuting Liu, Behnaz Arzani, Siva Kesava Reddy Kakarla, Liangyu Zhao, Vincent "
                "Liu, Miguel Castro, Srikanth Kandula, Luke Marshall",
            ),
            (
                "Efficient all-to-all Collective Communication Schedules for Direct-connect "
                "Topologies",
                "Prithwish Basu, Liangyu Zhao, Jason Fantl, Siddharth Pal, Arvind "
                "Krishnamurthy, Joud Khoury",
            ),
            (
                "AutoLRS: Automatic Learning-Rate Schedule by Bayesian Optimization on the Fly",
                "Yuchen Jin, Tianyi Zhou, Liangyu Zhao, Yibo Zhu, Chuanxiong Guo, Marco "
                "Canini, Arvind Krishnamurthy",
            ),
            (
                "Nexus: A GPU Cluster Engine for Accelerating DNN-Based Video Analysis",
                "Haichen Shen, Lequn Chen, Yuchen Jin, Liangyu Zhao, Bingyu Kong, Matthai "
                "Philipose, Arvind Krishnamurthy, Ravi Sundaram",
            ),
        ),
        entries=(
            # "Ph.D. in Computer Science 2021 – Present / Direction: Systems & Networking /
            # Advisor: Prof. Arvind Krishnamurthy"
            ("University of Washington", "Ph.D.", "Computer Science", "2021 – present"),
            ("Systems & Networking",),
            ("Prof. Arvind Krishnamurthy",),
            # "M.S. in Computer Science (incomplete) 2020 – 2021"
            ("University of Washington", "M.S.", "(incomplete)", "2020 – 2021"),
            # "B.S. in Computer Science, B.S. in Applied & Computational Mathematical
            # Sciences (Discrete Math and Algorithms track) 2015 – 2020"
            ("University of Washington", "B.S.", "Computer Science", "2015 – 2020"),
            ("Applied & Computational Mathematical Sciences", "Discrete Math and Algorithms"),
            # Industry Experience
            ("Meta", "Superintelligence Lab (MSL) Infra", "Research Scientist Intern"),
            ("Jun 2025 – Oct 2025",),
            ("Bingzhe Liu, Liang Luo, Amar Phanishayee",),
            ("NVIDIA", "Applied Deep Learning Research (ADLR)", "Research Intern"),
            ("Mar 2025 – Jun 2025",),
            ("Vijay Anand Korthikanti", "Deepak Narayanan"),
            ("Microsoft Research", "Research in Software Engineering (RiSE)"),
            ("Part-Time Researcher", "Jul 2024 – Nov 2024"),
            ("Research Intern", "Jun 2023 – Sep 2023"),
            ("Saeed Maleki",),
            ("ByteDance", "AI-Lab", "Research Intern, ML System", "Jul 2020 – Oct 2020"),
            ("Microsoft", "Azure Compute Core", "Software Engineer Intern", "Sep 2019 – Dec 2019"),
            ("Google", "Ads Infra", "Software Engineer Intern", "Jun 2019 – Sep 2019"),
            ("Microsoft", "Azure Compute Core", "Software Engineer Intern", "Jun 2018 – Aug 2018"),
            ("Zap Surgical Systems", "Software Engineer Intern", "Jun 2017 – Sep 2017"),
            # Invited Talks: "USENIX NSDI '25 April, 2025"; "Rice University October, 2025"
            ("USENIX NSDI '25", "Apr 2025"),
            ("Machine Learning System Seminar", "Rice University", "Oct 2025"),
            ("AMD Research", "Jul 2024"),
        ),
    ),
    "yuheng-zhao": Seed(  # 000_69803106e0394c21.txt
        papers=(
            (
                "RollArt: Disaggregated Multi-Task Agentic RL Training at Scale",
                "Wei Gao*, Yuheng Zhao*, Tianyuan Wu*, Shaopan Xiong*, Weixun Wang*, Dakai An, "
                "Lunxi Cao, Dilxat Muhtar, Zichen Liu, Haizhou Zhao, Ju Huang, Siran Yang, "
                "Yongbin Li, Wenbo Su, Jiamang Wang, Lin Qu, Bo Zheng, Wei Wang",
            ),
            (
                "RollPacker: Taming Long-Tail Rollouts for RL Post-Training with Tail Batching",
                "Wei Gao*, Yuheng Zhao*, Dakai An, Tianyuan Wu, Lunxi Cao, Shaopan Xiong, "
                "Ju Huang, Weixun Wang, Siran Yang, Wenbo Su, Jiamang Wang, Lin Qu, Bo Zheng, "
                "Wei Wang",
            ),
            (
                "Weave: Efficient Co-Scheduling for Disaggregated RL Post-Training",
                "Tianyuan Wu, Lunxi Cao, Yining Wei, Wei Gao, Yuheng Zhao, Dakai An, Shaopan "
                "Xiong, Zhiqiang Lv, Ju Huang, Siran Yang, Yinghao Yu, Jiamang Wang, Lin Qu, "
                "Wei Wang",
            ),
            (
                "How Different are the Cloud Workloads? Characterizing Large-Scale Private and "
                "Public Cloud Workloads",
                "Xiaoting Qin, Minghua Ma, Yuheng Zhao, Jue Zhang, Chao Du, Yudong Liu, Anjaly "
                "Parayil, Chetan Bansal, Saravan Rajmohan, Iñigo Goiri, Eli Cortez, Si Qin, "
                "Qingwei Lin, Dongmei Zhang",
            ),
            (
                "Reinforcement Learning Optimization for Large-Scale Learning: An Efficient and "
                "User-Friendly Scaling Library",
                "ROLL Team",
            ),
            (
                "ROSE: Rollout On Serving GPUs via Cooperative Elasticity for Agentic RL",
                "Wei Gao*, Yuheng Zhao*, Dilxat Muhtar, Dakai An, Xuchun Shang, Tianyuan Wu, "
                "Lunxi Cao, Shaopan Xiong, Weixun Wang, Ju Huang, Teng Ma, Siran Yang, "
                "Jiamang Wang, Lin Qu, Bo Zheng, Wei Wang",
            ),
        ),
        entries=(
            # "Fudan University** | CS | BSc Sep 2018 - Jun 2022"
            ("Fudan University", "BSc", "CS", "Sep 2018 – Jun 2022"),
            # "The Hong Kong University of Science and Technology** | CSE | Ph.D. Sep 2022 -
            # Jun 2027"
            ("The Hong Kong University of Science and Technology", "Ph.D.", "Sep 2022 – Jun 2027"),
            # "advised by Prof. Wei Wang"
            ("Prof. Wei Wang",),
            # "Research assistant at Cryptography and Information Security Laboratory,
            # supervised by Prof. Haibin Kan."
            ("Cryptography and Information Security Laboratory",),
            ("Prof. Haibin Kan",),
            # EXPERIENCE
            ("Alibaba Group", "ROLL", "Research Intern", "Beijing", "Mar 2025 – present"),
            ("Microsoft Research Asia", "DKI", "Research Intern", "Beijing", "Nov 2021 – Jun 2022"),
            ("University of Chicago", "Globus Lab", "Research Assistant", "Chicago"),
            ("May 2021 – Oct 2021",),
            # "Received the MSRA “Stars of Tomorrow” Award of Excellence (Top 10% of research
            # interns)."
            ("“Stars of Tomorrow” Award of Excellence", "Top 10% of research interns"),
        ),
    ),
}

# Every seed person's CV compiled once (pdflatex, xelatex for the CJK name): measured at
# about 0.5 s of CPU each, so all five.
PDF_PEOPLE = tuple(sorted(SEEDS))


def unmark(text: str) -> str:
    """Markdown back to its text: escapes undone, bold dropped (the owner's name)."""
    return re.sub(r"\\(.)", r"\1", text).replace("**", "")


def normalized(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("’", "'")  # ligatures, TeX's quote
    return re.sub(r"\s+,", ",", re.sub(r"\s+", " ", text))


@pytest.fixture(scope="module")
def resolution(repo_config):
    return resolve_project(repo_config)


@pytest.fixture(scope="module")
def markdown(resolution) -> dict[str, str]:
    return {slug: str(render(resolution, slug, "md")) for slug in SEEDS}


@pytest.fixture(scope="module")
def pdf_text(resolution, tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("cv-pdf")
    found = {}
    for slug in PDF_PEOPLE:
        path = folder / f"{slug}.pdf"
        path.write_bytes(bytes(render(resolution, slug, "pdf")))
        done = subprocess.run(
            ["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, check=True
        )
        found[slug] = normalized(done.stdout.decode("utf-8"))
    return found


@pytest.mark.parametrize("slug", sorted(SEEDS))
def test_markdown_has_every_fact_of_the_seed(markdown, slug):
    lines = [unmark(line).strip() for line in markdown[slug].splitlines()]
    seed = SEEDS[slug]
    for title, authors in seed.papers:
        at = [i for i, line in enumerate(lines) if title in line and re.match(r"\d+\. ", line)]
        assert len(at) == 1, title
        assert lines[at[0] + 1] == authors, title  # every author, in order, with marks
    for pieces in seed.entries:
        assert any(all(p in line for p in pieces) for line in lines), pieces
    # the Markdown CV numbers the papers 1..n, each once
    numbers = [int(m) for m in re.findall(r"^(\d+)\. ", markdown[slug], re.M)]
    assert numbers == list(range(1, len(seed.papers) + 1))


def test_repeated_awards_are_kept(markdown):
    # "Merit Student of Peking University 2024 / … 2019 / … 2018" (003), "Merit Student
    # Award, PKU Oct. 2020 / Oct. 2018" (001)
    assert unmark(markdown["yinmin-zhong"]).count("Merit Student of Peking University") == 3
    assert unmark(markdown["yihao-zhao"]).count("Merit Student Award") == 2


def test_publications_are_grouped_by_status_and_the_owner_emphasised(markdown):
    text = markdown["yihao-zhao"]
    # "Submitted to ATC'25": after the published papers, under its own heading
    assert text.index("### Submitted") > text.index("Unpaired Image-to-Image")
    assert "Submitted to ATC 2025" in text
    assert "**Yihao Zhao**\\*, Xiaoxiang Zhang\\*" in text  # bold owner, equal marks
    assert "* Equal contribution" in unmark(text)  # a legend, as the document has none
    yuheng = markdown["yuheng-zhao"]  # "(*Equal contribution)" is their own legend
    assert "(\\*Equal contribution)" in yuheng
    assert yuheng.index("### Submitted") < yuheng.index("### Technical reports")
    hanyu = markdown["hanyu-zhao"]  # "Selected Publications": the list is marked selected
    assert "### Selected publications" in hanyu
    assert "*OSDI 2024*" in hanyu and "*SIGMOD 2023*" in hanyu  # short names and years


def test_nothing_but_the_persons_own_document(markdown):
    # Yihao's listing of ElasticFlow prints no CCF note beside Yinmin's "ASPLOS 2023"…
    yinmin = unmark(markdown["yinmin-zhong"])
    block = yinmin[yinmin.index("ElasticFlow") :][:600]
    assert "CCF" not in block  # … Yihao's listing says [CCF-A]; Yinmin's does not
    assert "reading:" not in yinmin and "Transcribed" not in yinmin


@pytest.mark.parametrize("slug", PDF_PEOPLE)
def test_pdf_text_has_every_fact_of_the_seed(pdf_text, slug):
    text = pdf_text[slug]
    seed = SEEDS[slug]
    for title, authors in seed.papers:
        assert normalized(title) in text, title
        assert normalized(authors) in text, title
    for pieces in seed.entries:
        for piece in pieces:
            assert normalized(piece) in text, piece


def test_cjk_name_compiles_with_xelatex(resolution, pdf_text):
    tex = str(render(resolution, "hanyu-zhao", "tex"))
    assert "\\cjk{赵汉宇}" in tex and engine_for(tex) == "xelatex"
    assert engine_for(str(render(resolution, "yinmin-zhong", "tex"))) == "pdflatex"
    assert "赵汉宇" in pdf_text["hanyu-zhao"]


@pytest.mark.parametrize("slug", sorted(SEEDS))
def test_json_resume_validates_against_the_schema(resolution, slug):
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    document = json.loads(render(resolution, slug, "jsonresume"))
    jsonschema.validate(document, schema, format_checker=jsonschema.FormatChecker())
    titles = [p["name"] for p in document["publications"]]
    assert titles == [title for title, _ in sorted_by_cv(SEEDS[slug].papers, document)]
    assert document["basics"]["name"] == build_cv(resolution, slug).name


def sorted_by_cv(papers, document):
    """The seed's papers in the order the document lists them (grouping moves some)."""
    order = {p["name"]: i for i, p in enumerate(document["publications"])}
    return sorted(papers, key=lambda p: order[p[0]])


def test_json_resume_dates_keep_their_precision(resolution):
    document = json.loads(render(resolution, "liangyu-zhao", "jsonresume"))
    phd = document["education"][0]  # "Ph.D. in Computer Science 2021 – Present"
    assert phd["startDate"] == "2021" and "endDate" not in phd
    meta = document["work"][0]  # "Research Scientist Intern Jun – Oct 2025"
    assert (meta["startDate"], meta["endDate"]) == ("2025-06", "2025-10")
    assert len(document["meta"]["kg"]["talks"]) == 2


HOSTILE = r"Fast & 100% _safe_ #1 {x} \input{/etc/passwd} \write18{touch pwned} ~^$ [a]"


def test_tex_escaping_of_every_special_character():
    escaped = tex_escape(HOSTILE)
    assert "\\input" not in escaped and "\\write18" not in escaped
    assert escaped.startswith(r"Fast \& 100\% \_safe\_ \#1 \{x\} \textbackslash{}input\{")
    assert r"\textasciitilde{}\textasciicircum{}\$ {[}a{]}" in escaped


@pytest.fixture(scope="module")
def hostile_project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cv-hostile") / "project"
    shutil.copytree(Path(__file__).parent / "fixtures" / "mini", root)
    profile = root / "data" / "profiles" / "a-b.yaml"
    text = profile.read_text(encoding="utf-8")
    write(profile, text + "other:\n  - " + json.dumps(HOSTILE) + "\n")
    return root


def test_hostile_profile_text_is_printed_not_run(hostile_project, tmp_path):
    r = resolve_project(load_config(hostile_project))
    pdf = compile_pdf(str(render(r, "a-b", "tex")))
    path = tmp_path / "cv.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, check=True)
    printed = normalized(text.stdout.decode("utf-8"))
    assert r"\input{/etc/passwd} \write18{touch pwned}" in printed
    assert "root:" not in printed
    assert not (hostile_project / "pwned").exists() and not Path("pwned").exists()
    markdown = str(render(r, "a-b", "md"))
    assert r"\_safe\_ \#1" in markdown  # no emphasis or heading of the data's making
    html = str(render(r, "a-b", "html"))
    assert "Fast &amp; 100% _safe_" in html


def test_options_date_range_sections_and_limit(resolution):
    options = Options(
        start=PartialDate(2020),
        end=PartialDate(2022, 10),
        sections=("awards", "publications"),
        max_publications=2,
    )
    cv = build_cv(resolution, "yihao-zhao", options)
    assert [s.key for s in cv.sections] == ["awards", "publications"]
    # Awards in the range: "Jiukun Prize Oct. 2022", "Third Prize … Oct. 2020", "Merit
    # Student Award … Oct. 2020"
    assert [i.lead for i in cv.sections[0].items] == [
        "Jiukun Prize",
        "Third Prize, Peking University Award",
        "Merit Student Award",
    ]
    # papers of 2020-2022: "ACM SIGCOMM 2022", "ECCV 2020"; both fit the limit of two
    assert [p.title for p in cv.papers] == [
        "Multi-Resource Interleaving for Deep Learning Training",
        "Unpaired Image-to-Image Translation using Adversarial Consistency Loss",
    ]
    assert len(build_cv(resolution, "yihao-zhao", Options(max_publications=3)).papers) == 3
    # "Distributed Machine Learning / Fall 2022, Fall 2023": only the term in range stays
    teaching = build_cv(resolution, "yihao-zhao", Options(start=PartialDate(2023)))
    section = teaching.section("teaching")
    assert section is not None
    assert [(i.lead, i.when) for i in section.items] == [
        ("Distributed Machine Learning", "Fall 2023")
    ]


def test_project_template_override(project):
    write(project / "templates" / "cv" / "cv.md.j2", "CV of {{ cv.name }} <{{ '*' }}>\n")
    config = load_config(project)
    assert render_cv(config, "a-b", "md").startswith("CV of ")
    assert render_cv(config, "a-b", "md").endswith(r"<\*>" + "\n")  # still escaped


def test_cli_writes_files_and_reports_mistakes(tmp_path, capsys):
    out = tmp_path / "cv.html"
    assert (
        main(["--project", str(REPO), "cv", "yihao-zhao", "--format", "html", "--out", str(out)])
        == 0
    )
    page = out.read_text(encoding="utf-8")
    assert "@media print" in page and "<strong>Klotski:" in page
    assert main(["--project", str(REPO), "cv", "nobody"]) == 2
    assert "no profile 'nobody'" in capsys.readouterr().err
    assert main(["--project", str(REPO), "cv", "yihao-zhao", "--format", "pdf"]) == 2
    assert "--out" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["--project", str(REPO), "cv", "yihao-zhao", "--sections", "education,bogus"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        main(["--project", str(REPO), "cv", "yihao-zhao", "--from", "2024-13"])


def test_missing_tex_names_the_packages(resolution, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    from kg.errors import UsageError

    with pytest.raises(UsageError, match="apt-get install"):
        render(resolution, "yihao-zhao", "pdf")


def test_output_is_deterministic(resolution):
    for fmt in ("md", "html", "tex", "jsonresume"):
        assert render(resolution, "liangyu-zhao", fmt) == render(resolution, "liangyu-zhao", fmt)
    assert render_text(build_cv(resolution, "yihao-zhao"), "md").startswith("# Yihao Zhao\n")
    tex = str(render(resolution, "yihao-zhao", "tex"))
    assert compile_pdf(tex) == compile_pdf(tex)  # a fixed SOURCE_DATE_EPOCH: same bytes


def test_the_sites_cv_of_a_profile_is_kg_cvs(resolution):
    """The site passes the profile it holds (`cv_of`), `kg cv` a slug (`build_cv`, which
    searches): the same CV for every seed profile, in every text format."""
    for profile in resolution.dataset.profiles:
        at_hand, searched = cv_of(resolution, profile), build_cv(resolution, profile.slug)
        assert at_hand == searched and at_hand.slug == profile.slug
        for fmt in ("md", "html"):
            assert render_text(at_hand, fmt) == render_text(searched, fmt)


def test_site_has_a_printable_cv_linked_from_the_person_page(project):
    from kg.pipeline import site_parts

    files = {k: v for part in site_parts(load_config(project)) for k, v in part.items()}
    page = files["cv/a-b.html"]
    assert "@media print" in page and '<a href="../person/a-b.html">' in page
    assert '<a href="../cv/a-b.html">printable CV</a>' in files["person/a-b.html"]
    write(project / "templates" / "cv" / "cv.html.j2", "<p>{{ cv.name }} & {{ '<b>' }}</p>\n")
    files = {k: v for part in site_parts(load_config(project)) for k, v in part.items()}
    assert files["cv/a-b.html"] == "<p>Ann Bee & &lt;b&gt;</p>\n"  # the project's; values escaped


def test_docs_show_a_rendered_cv(resolution):
    from test_docs import _check_generated

    example = str(render(resolution, "yihao-zhao", "md"))
    _check_generated(REPO / "docs" / "cv.md", "````markdown\n" + example.strip() + "\n````")


def test_html_cv_prints_without_navigation(chromium, resolution, tmp_path):
    from browser import serve

    page_html = render_text(build_cv(resolution, "yinmin-zhong"), "html", back="index.html")
    write(tmp_path / "cv.html", page_html)
    with serve(tmp_path) as origin:
        page = chromium.new_page()
        try:
            page.goto(origin + "cv.html")
            assert page.locator("nav.back").is_visible()  # on screen: back to the profile
            page.emulate_media(media="print")
            assert not page.locator("nav.back").is_visible()
            (tmp_path / "printed.pdf").write_bytes(page.pdf(format="A4"))
        finally:
            page.close()
    done = subprocess.run(["pdftotext", str(tmp_path / "printed.pdf"), "-"], capture_output=True)
    printed = normalized(done.stdout.decode("utf-8"))
    assert "Profile page" not in printed
    for title, authors in SEEDS["yinmin-zhong"].papers:  # the page prints every paper
        assert normalized(title) in printed and normalized(authors) in printed


def test_markdown_values_cannot_start_a_block():
    from kg.publish.cv.render import md_escape

    assert md_escape("1. not a list") == "1\\. not a list"
    assert md_escape("- no item") == "\\- no item"
    assert md_escape("=== no heading") == "\\=== no heading"
    assert md_escape("# no heading, *no emphasis*") == "\\# no heading, \\*no emphasis\\*"
    assert md_escape("GPA 3.79/4.0 (top 5%)") == "GPA 3.79/4.0 (top 5%)"  # prose unchanged
